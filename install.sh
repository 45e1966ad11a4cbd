#!/usr/bin/env bash
# Install git-checkpoint so that `git checkpoint …` works; re-running upgrades in place.
#   ./install.sh          install (or upgrade) the tool
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
if [ "$mode" = install ]; then
  "${pip[@]}" install --upgrade "$here"
else
  "${pip[@]}" install --upgrade -e "$here[dev]"
fi

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
# tool call; git-checkpoint on every save and restore.
"$venv/bin/python" - "$data/bin" <<'PY'
import os, sys, sysconfig, git_checkpoint
folder = sys.argv[1]
paths = [os.path.dirname(os.path.dirname(git_checkpoint.__file__))]
for key in ("purelib", "platlib"):
    if sysconfig.get_path(key) not in paths:
        paths.append(sysconfig.get_path(key))
os.makedirs(folder, exist_ok=True)
for name, call in (("git-checkpoint", "entry.launch import main"), ("git-checkpoint-hook", "entry.hook import main")):
    target = os.path.join(folder, name)
    with open(target + ".new", "w") as fh:
        fh.write(f"#!{sys.executable} -IS\n# written by install.sh: {name}, started fast\n")
        fh.write(f"import sys\nsys.path += {paths!r}\nfrom git_checkpoint.{call}\n")
        fh.write(f"{call.split()[-1]}()\n")
    os.chmod(target + ".new", 0o755)
    os.replace(target + ".new", target)
PY
ln -sf "$data/bin/git-checkpoint" "$bin/git-checkpoint"
ln -sf "$data/bin/git-checkpoint-hook" "$bin/git-checkpoint-hook"
# The hook templates (git hooks, the shell guard) live beside the venv, where
# `git checkpoint hooks install` finds them when the tool is not run from a checkout.
rm -rf "$data/hooks.new" && cp -R "$here/hooks" "$data/hooks.new"
rm -rf "$data/hooks" && mv "$data/hooks.new" "$data/hooks"
echo "installed: $bin/git-checkpoint ($("$venv/bin/git-checkpoint" --version))"
if [ "$on_path" = no ]; then
  echo "add it to your PATH:  export PATH=\"$bin:\$PATH\""
fi

# The man page, in share/man beside the command's folder: `man` looks there for every
# folder on PATH, so `git help checkpoint` and `git checkpoint --help` find it.
mandir="$(dirname "$bin")/share/man"
if ! "$venv/bin/python" -m git_checkpoint.entry.manpage "$mandir/man1/git-checkpoint.1" 2>/dev/null; then
  mandir="$HOME/.local/share/man"
  "$venv/bin/python" -m git_checkpoint.entry.manpage "$mandir/man1/git-checkpoint.1"
fi
echo "man page: $mandir/man1/git-checkpoint.1 (git checkpoint --help)"
if command -v man >/dev/null && ! PATH="$bin:$PATH" man -w git-checkpoint >/dev/null 2>&1; then
  echo "for git checkpoint --help, add:  export MANPATH=\"$mandir:\$MANPATH\""
fi
# Shell completion: bash-completion lazy-loads git-checkpoint from the user's data dir when
# git's completion meets `git checkpoint`; zsh's _git calls _git-checkpoint from fpath.
xdg_data=${XDG_DATA_HOME:-$HOME/.local/share}
bash_completion="${BASH_COMPLETION_USER_DIR:-$xdg_data/bash-completion}/completions/git-checkpoint"
"$venv/bin/python" -m git_checkpoint.entry.completion bash "$bash_completion"
"$venv/bin/python" -m git_checkpoint.entry.completion zsh "$xdg_data/zsh/site-functions/_git-checkpoint"
echo "completion: $bash_completion (bash), $xdg_data/zsh/site-functions/_git-checkpoint (zsh)"
case "${SHELL:-}" in
  *zsh) echo "zsh: add  fpath+=(\"$xdg_data/zsh/site-functions\")  before compinit in ~/.zshrc" ;;
esac

if [ "$mode" = test ]; then
  cd "$here"
  echo "== ruff";  "$venv/bin/ruff" check git_checkpoint tests bench
  echo "== mypy --strict"; "$venv/bin/mypy" --strict git_checkpoint
  echo "== pytest"; PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -n 2
  # The benchmark at its smallest, so that it never rots (one round; no timing is judged).
  echo "== bench (1,000 files, 1 round)"
  bench_tmp=$(mktemp -d)
  PATH="$venv/bin:$PATH" "$venv/bin/python" bench/bench.py --sizes 1000 --repeat 1 --warmup 0 \
    --node-modules 500 --restore-files 100 --storage-count 3 --cache "$bench_tmp" >/dev/null
  rm -rf "$bench_tmp"
fi
