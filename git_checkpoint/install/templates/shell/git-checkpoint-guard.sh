# git-checkpoint shell guard, for bash and zsh. Source it from ~/.bashrc or ~/.zshrc with
# the line `git checkpoint hooks install --shell` prints (it names this file where it is
# installed):
#
#     . /path/to/site-packages/git_checkpoint/install/templates/shell/git-checkpoint-guard.sh
#
# Typed at the prompt, these save a checkpoint first (`git checkpoint save --auto`,
# nothing new when the work tree has not changed since the last one), then run as typed:
#   git reset --hard|--merge|--keep, git checkout -- PATH / . / -f / an existing path,
#   git restore (not --staged alone), git clean (not -n), git stash (push/pop/apply/drop),
#   git rebase, git merge, git am, git cherry-pick, git revert, git pull,
#   git switch --discard-changes/-f/-m, git rm (not --cached), git apply;
#   rm -r / rm -rf / rm --recursive inside a git work tree.
# A failed save never stops the command: one line on stderr, and it runs. The command's
# exit code is the function's. Skip the guard for one command with `command git …` or
# `command rm …`, or for the whole shell with GIT_CHECKPOINT_GUARD=off.
# It defines the shell functions `git` and `rm` (a function of yours by either name is
# replaced; an alias such as rm='rm -i' still applies, then calls ours).

__git_checkpoint_guard_save() {
    # $1: the folder git runs in (from -C), $2: the checkpoint message.
    local out rc
    out=$(command git -C "$1" checkpoint save --auto -m "$2" 2>&1 </dev/null)
    rc=$?
    if [ "$rc" -ne 0 ]; then
        out=$(printf '%s\n' "$out" | tail -n 1)
        printf 'git-checkpoint: no checkpoint saved (%s); running it anyway\n' \
            "${out#git checkpoint: }" >&2
    else
        case $out in
            *"checkpoint saved:"*)
                out=$(printf '%s\n' "$out" | grep 'checkpoint saved:' | tail -n 1)
                printf 'git-checkpoint: %s (%s)\n' "$out" "$2" >&2 ;;
        esac
    fi
    return 0
}

# Is `git ARGS` one of the forms that discard uncommitted work? Sets __git_checkpoint_dir.
__git_checkpoint_guard_git_risky() {
    __git_checkpoint_dir=.
    while [ $# -gt 0 ]; do
        case $1 in
            -C)
                [ $# -ge 2 ] || return 1
                case $2 in
                    /*) __git_checkpoint_dir=$2 ;;
                    *) __git_checkpoint_dir=$__git_checkpoint_dir/$2 ;;
                esac
                shift 2 ;;
            -c|--git-dir|--work-tree|--namespace|--config-env|--exec-path) shift 2 ;;
            --*=*|-p|-P|--paginate|--no-pager|--bare|--no-replace-objects|--literal-pathspecs) shift ;;
            --glob-pathspecs|--noglob-pathspecs|--icase-pathspecs|--no-optional-locks) shift ;;
            -*) return 1 ;;
            *) break ;;
        esac
    done
    [ $# -gt 0 ] || return 1
    local sub=$1 arg seen_dashdash=
    shift
    case $sub in
        reset)
            for arg; do
                case $arg in --hard|--merge|--keep) return 0 ;; esac
            done
            return 1 ;;
        checkout)
            for arg; do
                if [ -n "$seen_dashdash" ]; then return 0; fi
                case $arg in
                    --) seen_dashdash=1 ;;
                    -f|--force|-p|--patch|--ours|--theirs|-m|--merge|.) return 0 ;;
                    -*) ;;
                    *) [ -e "$__git_checkpoint_dir/$arg" ] && return 0 ;;
                esac
            done
            return 1 ;;
        restore)
            local staged= worktree=
            for arg; do
                case $arg in
                    -S|--staged) staged=1 ;;
                    -W|--worktree) worktree=1 ;;
                    -SW|-WS) staged=1; worktree=1 ;;
                esac
            done
            [ -n "$staged" ] && [ -z "$worktree" ] && return 1
            return 0 ;;
        clean)
            for arg; do
                case $arg in
                    --dry-run) return 1 ;;
                    --*) ;;
                    -*n*) return 1 ;;
                esac
            done
            return 0 ;;
        stash)
            case ${1:-push} in
                list|show|create|store) return 1 ;;
            esac
            return 0 ;;
        rebase|merge|am|cherry-pick|revert)
            for arg; do
                case $arg in --continue|--show-current-patch|--edit-todo) return 1 ;; esac
            done
            return 0 ;;
        switch)
            for arg; do
                case $arg in --discard-changes|-f|--force|-m|--merge) return 0 ;; esac
            done
            return 1 ;;
        pull) return 0 ;;
        rm)
            for arg; do
                case $arg in --cached|-n|--dry-run) return 1 ;; esac
            done
            return 0 ;;
        apply)
            for arg; do
                case $arg in --check|--stat|--numstat|--summary|--cached) return 1 ;; esac
            done
            return 0 ;;
    esac
    return 1
}

function git {
    if [ "${GIT_CHECKPOINT_GUARD:-on}" != off ] && __git_checkpoint_guard_git_risky "$@"; then
        __git_checkpoint_guard_save "$__git_checkpoint_dir" "before: git $*"
    fi
    command git "$@"
}

function rm {
    if [ "${GIT_CHECKPOINT_GUARD:-on}" != off ]; then
        local arg
        for arg; do
            case $arg in
                --) break ;;
                --recursive|-[!-]*[rR]*|-[rR]*)
                    if command git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
                        __git_checkpoint_guard_save . "before: rm $*"
                    fi
                    break ;;
            esac
        done
    fi
    command rm "$@"
}
