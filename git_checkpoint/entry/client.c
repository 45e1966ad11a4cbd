/* git-checkpoint and git-checkpoint-hook as install.sh builds them: hand the command to
 * the installation's command server (entry/server.py) without starting Python, or, when
 * there is no server or the command is not one it takes, run the Python launcher.
 * entry/relay.py is the same client in Python, core/rendezvous.py documents the wire
 * format; this file follows them line for line.
 *
 * Built with: cc -O2 -DCONFIG='"client_config.h"' -o git-checkpoint client.c
 * where client_config.h (written by install.sh) defines IDENTITY (the installation, as
 * relay.identity() gives it), SOCKET_KEY (relay.key(IDENTITY)), LAUNCHER and
 * HOOK_LAUNCHER (the Python launchers to run when the server cannot be used).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include CONFIG

extern char **environ;

static volatile pid_t worker; /* read by the signal handlers */

/* The signals that go on to the worker (entry/relay.py FORWARDED), then Ctrl-Z's. */
static const int relayed_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};

/* The verbs the server takes (entry/cmdline.py RELAYED_VERBS) and the global options that
 * may come before the verb (GLOBAL_OPTIONS). */
static const char *const relayed_verbs[] = {"save", "restore", "undo", "list", "status", "resume", NULL};

static int relayed(int argc, char **argv)
{
    int start = 1;
    while (start < argc && (!strcmp(argv[start], "-P") || !strcmp(argv[start], "--no-pager")))
        start++;
    if (start >= argc)
        return 0;
    for (const char *const *verb = relayed_verbs; *verb; verb++)
        if (!strcmp(argv[start], *verb))
            return 1;
    return 0;
}

/* `missed`: NULL (the command is not one the server takes), "1" (no server: the
 * launcher starts one) or "refused" (a server said no: the launcher just runs it). */
static void run_here(const char *launcher, char **argv, const char *missed)
{
    if (missed)
        setenv("GIT_CHECKPOINT_SERVER_MISSED", missed, 1);
    execv(launcher, argv);
    fprintf(stderr, "git-checkpoint: cannot run %s: %s\n", launcher, strerror(errno));
    exit(127);
}

static int connect_server(void)
{
    char dir[64];
    struct stat st;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(dir, sizeof dir, "/tmp/git-checkpoint-%u", (unsigned)getuid());
    if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        return -1;
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s/%s.sock", dir, SOCKET_KEY);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A growing buffer for the request. */
struct buf {
    char *data;
    size_t len, cap;
};

static int put(struct buf *b, const void *data, size_t len)
{
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown)
            return -1;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

static int field(struct buf *b, const char *text, int first)
{
    return (first ? 0 : put(b, "", 1)) | put(b, text, strlen(text));
}

static int build(struct buf *b, const char *role, int argc, char **argv)
{
    char number[32], *cwd = getcwd(NULL, 0);
    mode_t mask = umask(022);
    umask(mask);
    if (!cwd)
        return -1;
    int bad = put(b, "GCP2\0\0\0\0", 8) | field(b, IDENTITY, 1) | field(b, role, 0) | field(b, cwd, 0);
    free(cwd);
    snprintf(number, sizeof number, "%o", (unsigned)mask);
    bad |= field(b, number, 0);
    char ignored[64] = "";
    for (size_t i = 0; i < sizeof relayed_signals / sizeof *relayed_signals; i++) {
        struct sigaction now;
        if (!sigaction(relayed_signals[i], NULL, &now) && now.sa_handler == SIG_IGN)
            snprintf(ignored + strlen(ignored), sizeof ignored - strlen(ignored), "%s%d",
                     *ignored ? "," : "", relayed_signals[i]);
    }
    bad |= field(b, ignored, 0);
    snprintf(number, sizeof number, "%d", argc - 1);
    bad |= field(b, number, 0);
    for (int i = 1; i < argc; i++)
        bad |= field(b, argv[i], 0);
    for (char **env = environ; *env; env++)
        if (strncmp(*env, "GIT_CHECKPOINT_SERVER_MISSED=", 29))
            bad |= field(b, *env, 0);
    if (bad)
        return -1;
    size_t body = b->len - 8;
    for (int i = 0; i < 4; i++)
        b->data[4 + i] = (char)((body >> (24 - 8 * i)) & 0xff);
    return 0;
}

static int send_request(int sock, struct buf *b)
{
    int fds[3] = {0, 1, 2};
    char control[CMSG_SPACE(sizeof fds)];
    struct iovec iov = {.iov_base = b->data, .iov_len = b->len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(cmsg), fds, sizeof fds);
    ssize_t sent;
    do
        sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent < 0)
        return -1;
    for (size_t done = (size_t)sent; done < b->len;) {
        ssize_t more = send(sock, b->data + done, b->len - done, MSG_NOSIGNAL);
        if (more < 0 && errno == EINTR)
            continue;
        if (more <= 0)
            return -1;
        done += (size_t)more;
    }
    return 0;
}

/* Read an answer: a letter and a number; 0 on success, -1 when the server closed. */
static int answer(int sock, char *letter, unsigned *number)
{
    unsigned char got[5];
    size_t have = 0;
    while (have < sizeof got) {
        ssize_t n = read(sock, got + have, sizeof got - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        have += (size_t)n;
    }
    *letter = (char)got[0];
    *number = ((unsigned)got[1] << 24) | ((unsigned)got[2] << 16) | ((unsigned)got[3] << 8) | got[4];
    return 0;
}

/* Signals that came before the worker was known: sent once it is (see entry/relay.py). */
static volatile sig_atomic_t early;

static void forward(int signum)
{
    if (worker <= 0) {
        early |= 1 << signum;
        return;
    }
    /* To the worker's process group: its git children too (see entry/relay.py). */
    if (kill(-worker, signum) < 0)
        kill(worker, signum);
}

/* Ctrl-Z: the worker stops, then this process; `fg` continues both. */
static void stop(int signum)
{
    sigset_t tstp;
    if (worker <= 0) {
        early |= 1 << SIGTSTP;
        return;
    }
    forward(SIGTSTP);
    signal(SIGTSTP, SIG_DFL);
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    sigprocmask(SIG_UNBLOCK, &tstp, NULL);
    raise(SIGTSTP); /* stopped here until SIGCONT */
    struct sigaction act = {.sa_handler = stop};
    sigemptyset(&act.sa_mask);
    sigaction(SIGTSTP, &act, NULL);
    forward(SIGCONT);
    (void)signum;
}

int main(int argc, char **argv)
{
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    int hook = strlen(base) >= 5 && !strcmp(base + strlen(base) - 5, "-hook");
    const char *launcher = hook ? HOOK_LAUNCHER : LAUNCHER;
    const char *off = getenv("GIT_CHECKPOINT_SERVER");
    if ((off && !strcmp(off, "off")) || (!hook && !relayed(argc, argv)))
        run_here(launcher, argv, NULL);
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0)
            run_here(launcher, argv, NULL); /* a closed stream: run it here, as it would */
    int sock = connect_server();
    if (sock < 0)
        run_here(launcher, argv, "1");
    struct buf request = {0};
    char letter = 0;
    unsigned number;
    struct sigaction was[sizeof relayed_signals / sizeof *relayed_signals];
    for (size_t i = 0; i < sizeof relayed_signals / sizeof *relayed_signals; i++) {
        struct sigaction act = {.sa_handler = relayed_signals[i] == SIGTSTP ? stop : forward};
        sigemptyset(&act.sa_mask);
        if (!sigaction(relayed_signals[i], NULL, &was[i]) && was[i].sa_handler != SIG_IGN)
            sigaction(relayed_signals[i], &act, NULL); /* one ignored here stays ignored */
    }
    if (build(&request, hook ? "hook" : "cli", argc, argv) || send_request(sock, &request) ||
        answer(sock, &letter, &number) || letter != 'P') {
        close(sock); /* refused (its code changed, another context) or gone: run it here */
        for (size_t i = 0; i < sizeof relayed_signals / sizeof *relayed_signals; i++) {
            sigaction(relayed_signals[i], &was[i], NULL);
            if (early & (1 << relayed_signals[i]))
                raise(relayed_signals[i]); /* this process's, as before any worker */
        }
        run_here(launcher, argv, letter == 'R' ? "refused" : "1");
    }
    free(request.data);
    /* The worker made known and the signals that came before it taken, as one step: a
       signal between the two would otherwise wait for a worker already known. */
    sigset_t relayed, before;
    sigemptyset(&relayed);
    for (size_t i = 0; i < sizeof relayed_signals / sizeof *relayed_signals; i++)
        sigaddset(&relayed, relayed_signals[i]);
    sigprocmask(SIG_BLOCK, &relayed, &before);
    worker = (pid_t)number;
    int came = early;
    early = 0;
    sigprocmask(SIG_SETMASK, &before, NULL);
    for (size_t i = 0; i < sizeof relayed_signals / sizeof *relayed_signals; i++)
        if (came & (1 << relayed_signals[i]))
            (relayed_signals[i] == SIGTSTP ? stop : forward)(relayed_signals[i]);
    if (answer(sock, &letter, &number)) {
        /* The worker ended with no word: killed with its server. End as the same
           command would, killed in its own process. */
        fputs("git-checkpoint: killed with the command server before it finished; "
              "`git checkpoint status` says where the workspace stands\n", stderr);
        kill(getpid(), SIGKILL);
        return 128 + SIGKILL;
    }
    if (letter == 'S') {
        signal((int)number, SIG_DFL);
        kill(getpid(), (int)number);
        return 128 + (int)number;
    }
    return (int)number;
}
