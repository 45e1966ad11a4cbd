#!/usr/bin/env bash
# Install git-checkpoint so that `git checkpoint …` works; re-running upgrades in place.
#   ./install.sh          install (or upgrade) the tool: a copy of this checkout
#   ./install.sh --dev    also install the test tools, from this checkout (editable)
#   ./install.sh --test   --dev, then run the checks: ruff, mypy --strict, pytest
# Needs only python3 (3.11+), pip/venv and git. No sudo: it installs into a virtual
# environment under your home, and links the command into a folder on your PATH.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=install
for arg in "$@"; do
  case "$arg" in
    --dev) mode=dev ;;
    --test) mode=test ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "install.sh: git-checkpoint needs Python 3.11 or newer ($python is too old or missing)" >&2
  exit 1
fi
command -v git >/dev/null || { echo "install.sh: git is not installed" >&2; exit 1; }

data=${GIT_CHECKPOINT_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/git-checkpoint}
venv="$data/venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "creating $venv"
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install --upgrade pip >/dev/null 2>&1 || true
# Before the distribution had its own name it was installed as git-checkpoint, a name the
# package index gives to another project: take that one out, so one package owns the files.
if "${pip[@]}" show git-checkpoint >/dev/null 2>&1; then
  "${pip[@]}" uninstall -y git-checkpoint >/dev/null
fi
if [ "$mode" = install ]; then
  # A copy of the checkout as it is, built away from it: setuptools builds in the source
  # folder and would ship whatever an earlier build left in its build/ (deleted modules too).
  snapshot=$(mktemp -d)
  trap 'rm -rf "$snapshot"' EXIT
  "$python" - "$here" "$snapshot/src" <<'PY'
import shutil, sys
skip = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
                              ".hypothesis", ".venv", "venv", ".tox")
shutil.copytree(sys.argv[1], sys.argv[2], symlinks=True, ignore=skip)
PY
  "${pip[@]}" install --upgrade "$snapshot/src"  # (pip reinstalls a folder whatever its version)
else
  "${pip[@]}" install --upgrade -e "$here[dev]"
fi
# What `git checkpoint` names when it says how to reinstall: this script, in this clone.
printf '%s\n' "$here" >"$venv/install.sh-receipt"

# Link into the first writable folder already on PATH from this list, else ~/.local/bin
# ($GIT_CHECKPOINT_BIN chooses the folder).
bin=${GIT_CHECKPOINT_BIN:-}
[ -n "$bin" ] && mkdir -p "$bin"
for dir in "$HOME/.local/bin" "$HOME/bin" /usr/local/bin; do
  [ -n "$bin" ] && break
  case ":$PATH:" in *":$dir:"*) ;; *) continue ;; esac
  if [ -d "$dir" ] && [ -w "$dir" ]; then bin=$dir; break; fi
  if [ ! -e "$dir" ] && mkdir -p "$dir" 2>/dev/null; then bin=$dir; break; fi
done
on_path=yes
case ":$PATH:" in *":$bin:"*) ;; *) [ -n "$bin" ] && on_path=no ;; esac
if [ -z "$bin" ]; then
  bin="$HOME/.local/bin"; on_path=no
  mkdir -p "$bin"
fi
# Both commands get a launcher that starts Python without the site machinery (-I -S: no
# .pth files, no editable-install finder: 13 ms less per command here) and puts the
# package and its dependencies on sys.path. git-checkpoint-hook runs on every agent
# tool call; git-checkpoint on every save and restore. The paths are read by the venv's
# Python under -I, so the folder this script runs in (a clone holds git_checkpoint/
# too) is not on its sys.path: a plain install's launchers name the venv's copy only.
# With a C compiler, what goes on PATH is entry/client.c built for this installation:
# it hands save, restore, undo and the hooks to the command server (the tool imported
# once, a fork per command) without starting Python, and runs the Python launchers
# (in libexec/) for everything else or when there is no server.
"$venv/bin/python" -I - "$data/libexec" <<'PY'
import os, sys, sysconfig, git_checkpoint
folder = sys.argv[1]
paths = [os.path.dirname(os.path.dirname(git_checkpoint.__file__))]
for key in ("purelib", "platlib"):
    if sysconfig.get_path(key) not in paths:
        paths.append(sysconfig.get_path(key))
os.makedirs(folder, exist_ok=True)
calls = (("git-checkpoint", "entry.launch import main"), ("git-checkpoint-hook", "entry.hook import main"))
for name, call in (*calls, ("identity", "core.rendezvous import identity")):
    target = os.path.join(folder, name)
    with open(target + ".new", "w") as fh:
        fh.write(f"#!{sys.executable} -IS\n# written by install.sh: {name}, started fast\n")
        if name != "identity":  # a Ctrl-C while Python loads the command: no traceback
            early = "lambda *_: (os.write(2, b'git checkpoint: interrupted\\n'), os._exit(130))"
            fh.write("import _signal, os\nif _signal.getsignal(2) is _signal.default_int_handler:\n")
            fh.write(f"    _signal.signal(2, {early if name == 'git-checkpoint' else '_signal.SIG_DFL'})\n")
        fh.write(f"import sys\nsys.path += {paths!r}\nfrom git_checkpoint.{call}\n")
        fh.write("print(identity(), end='')\n" if name == "identity" else f"{call.split()[-1]}()\n")
    os.chmod(target + ".new", 0o755)
    os.replace(target + ".new", target)
PY
client_config() {  # the installation the compiled client serves, as C string literals
  "$venv/bin/python" -I - "$data/libexec" "$("$data/libexec/identity")" <<'PY'
import os, sys
from git_checkpoint.core.rendezvous import key
folder, identity = sys.argv[1], sys.argv[2]
def c(text):
    return '"' + "".join(ch if b < 128 and (ch.isalnum() or ch in "/._-") else "\\%03o" % b for ch, b in ((chr(b), b) for b in os.fsencode(text))) + '"'
print(f"#define IDENTITY {c(identity)}\n#define SOCKET_KEY {c(key(identity))}")
print(f"#define LAUNCHER {c(os.path.join(folder, 'git-checkpoint'))}")
print(f"#define HOOK_LAUNCHER {c(os.path.join(folder, 'git-checkpoint-hook'))}")
PY
}
mkdir -p "$data/bin"
client_src=$("$venv/bin/python" -I -c \
  'import git_checkpoint, os; print(os.path.join(os.path.dirname(git_checkpoint.__file__), "entry", "client.c"))')
if client_config > "$data/libexec/client_config.h" &&
  "${CC:-cc}" -O2 -o "$data/bin/git-checkpoint.new" -DCONFIG="\"$data/libexec/client_config.h\"" \
    "$client_src" 2>"$data/libexec/client.log"; then
  mv -f "$data/bin/git-checkpoint.new" "$data/bin/git-checkpoint"
  ln -f "$data/bin/git-checkpoint" "$data/bin/git-checkpoint-hook.new"
  mv -f "$data/bin/git-checkpoint-hook.new" "$data/bin/git-checkpoint-hook"
else
  echo "note: no C compiler built the fast client (${CC:-cc}: see $data/libexec/client.log);"
  echo "      the commands start Python each time, and still use the command server"
  for name in git-checkpoint git-checkpoint-hook; do
    cp "$data/libexec/$name" "$data/bin/$name.new" && mv -f "$data/bin/$name.new" "$data/bin/$name"
  done
fi
rm -f "$data/libexec/identity"
ln -sf "$data/bin/git-checkpoint" "$bin/git-checkpoint"
ln -sf "$data/bin/git-checkpoint-hook" "$bin/git-checkpoint-hook"
# The hook templates are package data now. An rc file may still source the shell guard
# from where an older install.sh copied it: that path becomes a link to the installed one.
templates=$("$venv/bin/python" -I -c \
  'from git_checkpoint.install.git_hooks import templates_dir; print(templates_dir())')
rm -rf "$data/hooks" && ln -s "$templates" "$data/hooks"
echo "installed: $bin/git-checkpoint ($("$venv/bin/git-checkpoint" --version))"
if [ "$on_path" = no ]; then
  echo "add it to your PATH:  export PATH=\"$bin:\$PATH\""
fi

# The man page and the completion scripts, as the package installed them in the venv's
# share/ (for an editable install, the clone's share/ they come from). The man page goes
# beside the command's folder: `man` looks in ../share/man for every folder on PATH, so
# `git help checkpoint` and `git checkpoint --help` find it. bash-completion lazy-loads
# git-checkpoint from the user's data dir when git's completion meets `git checkpoint`;
# zsh's _git calls _git-checkpoint from fpath.
put() {  # put SOURCE TARGET: a copy, replaced whole
  mkdir -p "$(dirname "$2")" && cp "$1" "$2.new" && mv -f "$2.new" "$2"
}
shared="$venv/share"
[ "$mode" = install ] || shared="$here/share"  # an editable install puts no data files
page="$shared/man/man1/git-checkpoint.1"
mandir="$(dirname "$bin")/share/man"
if ! put "$page" "$mandir/man1/git-checkpoint.1" 2>/dev/null; then
  mandir="$HOME/.local/share/man"
  put "$page" "$mandir/man1/git-checkpoint.1"
fi
echo "man page: $mandir/man1/git-checkpoint.1 (git checkpoint --help)"
if command -v man >/dev/null && ! PATH="$bin:$PATH" man -w git-checkpoint >/dev/null 2>&1; then
  echo "for git checkpoint --help, add:  export MANPATH=\"$mandir:\$MANPATH\""
fi
xdg_data=${XDG_DATA_HOME:-$HOME/.local/share}
bash_completion="${BASH_COMPLETION_USER_DIR:-$xdg_data/bash-completion}/completions/git-checkpoint"
zsh_completion="$xdg_data/zsh/site-functions/_git-checkpoint"
put "$shared/bash-completion/completions/git-checkpoint" "$bash_completion"
put "$shared/zsh/site-functions/_git-checkpoint" "$zsh_completion"
echo "completion: $bash_completion (bash), $zsh_completion (zsh)"
case "${SHELL:-}" in
  *zsh) echo "zsh: add  fpath+=(\"$xdg_data/zsh/site-functions\")  before compinit in ~/.zshrc" ;;
esac

if [ "$mode" = test ]; then
  cd "$here"
  echo "== ruff";  "$venv/bin/ruff" check git_checkpoint tests bench
  echo "== mypy --strict"; "$venv/bin/mypy" --strict git_checkpoint
  # Three workers on two cores: much of a test is waiting on git, servers and agents.
  echo "== pytest"; PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -n 3
  # The benchmark at its smallest, so that it never rots (one round; no timing is judged).
  echo "== bench (1,000 files, 1 round)"
  bench_tmp=$(mktemp -d)
  PATH="$venv/bin:$PATH" "$venv/bin/python" bench/bench.py --sizes 1000 --repeat 1 --warmup 0 \
    --node-modules 500 --restore-files 100 --storage-count 3 --cache "$bench_tmp" >/dev/null
  rm -rf "$bench_tmp"
fi
