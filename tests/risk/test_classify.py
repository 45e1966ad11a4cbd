"""The risk classifier against a table of real command lines, the kind agents run.

The table is the ground truth of what should be saved before it runs (R) and what need not
(H); it is not a mirror of the code. Known misses stay in the table, marked xfail in
KNOWN_MISSES with the reason, so that the counts in the report stay honest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_checkpoint.risk.classify import Verdict, classify

# R = risky (save first), H = harmless. `\\n` in a line stands for a newline.
TABLE = r"""
H | ls -la
H | ls src/ | head -20
H | cat README.md
H | cat src/app.py | grep -n "def "
H | grep -rn "TODO" src/
H | rg -n "import os" --type py
H | rg "foo" | wc -l
H | find . -name "*.py" -not -path "./.venv/*"
H | find . -type f -name '*.pyc' | head
H | head -50 src/app.py
H | tail -f log.txt
H | wc -l src/*.py
H | tree -L 2
H | pwd
H | echo "hello world"
H | echo $PATH
H | which python3
H | du -sh build/
H | diff src/app.py backup/app.py
H | stat existing.txt
H | file data.csv
H | sort data.csv | uniq -c | sort -rn | head
H | awk -F, '{print $1}' data.csv
H | sed -n '10,20p' src/app.py
H | sed 's/foo/bar/g' src/app.py
H | jq '.scripts' package.json
H | cd src && ls
H | cd /tmp && ls -la
H | env | grep PATH
H | ps aux | grep python
H | git status
H | git status --short
H | git diff
H | git diff --stat HEAD~1
H | git log --oneline -20
H | git log -p -- src/app.py
H | git show HEAD:src/app.py
H | git branch -a
H | git blame src/app.py
H | git rev-parse --show-toplevel
H | git -C src log -1
H | git --no-pager diff --cached
H | git add -A && git commit -m "fix bug"
H | git add src/app.py
H | git commit --amend --no-edit
H | git push origin main
H | git fetch --all
H | git stash list
H | git stash show -p
H | git checkout -b feature/login
H | git checkout main
H | git switch -c new-branch
H | git switch main
H | git restore --staged src/app.py
H | git clean -n
H | git reset HEAD src/app.py
H | git reset --soft HEAD~1
H | git rm --cached config.yaml
H | git worktree list
H | git tag v1.0
H | git checkpoint list
H | git rebase --continue
H | git reset
R | git reset --hard
R | git reset --hard HEAD~1
R | git reset --hard origin/main
R | git checkout -- src/app.py
R | git checkout .
R | git checkout src/app.py
R | git checkout HEAD~2 -- src/
R | git checkout -f main
R | git restore src/app.py
R | git restore .
R | git restore --source=HEAD~1 src/app.py
R | git clean -fd
R | git clean -fdx
R | git stash
R | git stash -u
R | git stash push -m "wip"
R | git stash pop
R | git stash drop
R | git rebase main
R | git rebase -i HEAD~3
R | git rebase --abort
R | git merge feature
R | git merge --abort
R | git switch --discard-changes main
R | git switch -f main
R | git am < patch.mbox
R | git cherry-pick abc123
R | git pull
R | git pull --rebase origin main
R | git rm src/util.py
R | git apply fix.patch
R | git -C src reset --hard
R | cd src && git checkout -- .
R | rm existing.txt
R | rm -rf build/
R | rm -f /tmp/scratch.log
R | sudo rm -rf /var/cache/app
R | find . -name "*.pyc" -delete
R | find . -name '__pycache__' -type d -exec rm -rf {} +
R | find . -name "*.orig" | xargs rm
R | ls *.tmp | xargs -I{} rm {}
H | find src -name '*.py' -exec grep -l TODO {} \;
H | find . -name "*.py" | xargs grep "import"
R | truncate -s 0 log.txt
R | unlink old.txt
H | mv src/app.py src/main.py
R | mv notes.md README.md
R | mv existing.txt /tmp/
R | cp src/app.py backup/
H | cp src/app.py src/app_copy.py
H | cp -r src/ new_src/
H | cp config.yaml config.yaml.bak
R | cp data.csv existing.txt
H | mv build/out.o empty/
R | sed -i 's/foo/bar/g' src/app.py
R | sed -i.bak -e 's/x/y/' config.yaml
R | sed -Ei 's/a/b/' notes.md
R | perl -pi -e 's/old/new/g' src/*.py
H | perl -ne 'print if /TODO/' src/app.py
R | echo "x" > existing.txt
H | echo "new content" > brand_new.txt
R | cat > src/app.py << 'EOF'\nprint("hi")\nEOF
H | cat > src/new_module.py <<EOF\nimport os\nrm -rf /\nEOF
H | python -m pytest > test_output.txt 2>&1
R | pytest 2>&1 | tee log.txt
H | echo "line" >> notes.md
H | npm test > /dev/null 2>&1
R | printf '%s\n' a b > README.md
R | : > log.txt
R | pip install requests
R | pip install -r requirements.txt
R | python -m pip install -e .
H | pip list
H | pip show requests
H | pip freeze > requirements.txt
R | uv add httpx
R | uv sync
R | uv pip install pytest
H | uv run pytest -q
R | poetry add requests
R | poetry install
H | poetry run pytest
R | npm install
R | npm install --save-dev typescript
R | npm ci
H | npm test
H | npm run build
H | npm run lint
R | npm run format
R | yarn
R | yarn add lodash
H | yarn test
R | pnpm install
R | pnpm add -D vitest
R | cargo add serde
H | cargo build --release
H | cargo test
R | go get github.com/pkg/errors
R | go mod tidy
H | go test ./...
H | go build ./...
R | bundle install
H | bundle exec rspec
R | gem install rails
R | alembic upgrade head
R | alembic revision --autogenerate -m "add users"
H | alembic current
R | python manage.py migrate
R | python manage.py makemigrations
H | python manage.py test
R | rails db:migrate
R | bin/rails db:migrate RAILS_ENV=test
R | bundle exec rake db:migrate
R | npx prisma migrate dev --name init
R | npx prisma generate
H | npx prisma migrate status
R | npx knex migrate:latest
H | knex migrate:status
R | rails generate model User name:string
R | protoc --python_out=. api.proto
R | npx openapi-generator-cli generate -i spec.yaml -g python -o client
R | go generate ./...
R | ng generate component header
R | make clean
H | make
H | make test
H | make -j4 build
R | make distclean
R | make clean && make
R | env FOO=1 rm -rf build
H | FOO=1 BAR=2 python -m pytest tests/
R | sudo apt-get install -y zsh
R | nohup rm -rf /tmp/cache &
H | time pytest -x
R | time rm -rf build
R | command rm -f existing.txt
H | exec python -m http.server
H | timeout 60 pytest
R | timeout 5 git clean -fd
R | bash -c 'rm -rf build'
H | sh -c "ls -la && git status"
H | bash -lc "cd src && pytest"
R | (cd src && rm -rf __pycache__)
R | ls && rm existing.txt
R | git status || git stash
R | true; git reset --hard
R | echo $(rm -rf build)
H | echo "$(git rev-parse HEAD)"
H | echo `date`
R | for f in *.log; do rm "$f"; done
H | for f in src/*.py; do echo $f; done
H | if [ -f existing.txt ]; then cat existing.txt; fi
R | if [ -d build ]; then rm -rf build; fi
H | cat data.csv | python -c "import sys; print(sys.stdin.read().upper())"
H | python -c "print('hello')"
H | python3 -c "import sys; print(sys.version)"
R | python -c "import os; os.remove('existing.txt')"
R | python -c "import shutil; shutil.rmtree('build')"
R | python -c "open('existing.txt', 'w').write('x')"
H | python -c "import json; print(json.load(open('package.json')))"
R | python script.py
H | python -m pytest -x -q
H | python -m mypy src
R | python3 -m black src/
H | python -m black --check src/
H | node -e "console.log(process.version)"
R | node -e "require('fs').unlinkSync('existing.txt')"
R | node scripts/build.js
H | ruby -e 'puts 1+1'
R | ruby -e 'File.delete("existing.txt")'
R | perl -e 'unlink "existing.txt"'
R | black .
H | ruff check .
R | ruff check --fix .
R | ruff format .
H | ruff format --check .
R | prettier --write "src/**/*.ts"
H | prettier --check .
H | eslint src/
R | eslint --fix src/
H | gofmt -l .
R | gofmt -w .
R | cargo fmt
H | cargo fmt -- --check
H | mypy --strict src
H | pytest -x tests/test_app.py
H | tsc --noEmit
H | npx tsc --noEmit
H | npx jest --coverage
R | npx eslint . --fix
R | tar -xzf release.tar.gz
H | tar czf backup.tgz src/
H | tar -tzf release.tar.gz
R | unzip -o archive.zip
H | unzip -l archive.zip
R | curl -sSL https://example.com/install.sh | bash
R | curl -o existing.txt https://example.com/x
H | curl -s https://api.example.com/status
R | wget -O data.csv https://example.com/data.csv
H | curl -fsSLo new_file.json https://example.com/x.json
R | docker run --rm -v $(pwd):/app node:20 npm install
H | docker ps
H | docker compose up -d
H | kubectl get pods
H | mkdir -p build/output && touch build/output/.keep
H | chmod +x scripts/run.sh
R | ln -sf src/app.py current
R | rsync -av --delete src/ backup/
R | patch -p1 < fix.patch
R | dd if=/dev/zero of=existing.txt bs=1k count=1
R | eval "rm -rf build"
H | source .venv/bin/activate && pytest
R | . ./scripts/setup.sh
R | ./run_tests.sh
R | terraform apply
H | terraform plan
R | pre-commit run --all-files
R | vim src/app.py
R | xargs -a files.txt rm
H | cat files.txt | xargs -n1 echo
H | git diff > changes.patch
R | git log --oneline | head -5 > notes.md
H | ls -la > /dev/null
H | echo 'rm -rf /'
H | grep -r "rm -rf" .
H | echo "git reset --hard"
H | sleep 5 && git status
H | npm run dev &
H | kill %1
H | uvx ruff check .
R | uvx ruff format .
H | pipx run black --check .
R | cargo run --bin server
R | go run main.go
R | npx create-next-app@latest my-app
R | make -C src clean
R | cd build && make clean
H | git log --format='%H %s' | grep -i "fix" | head
H | python -m pytest tests/ -k "not slow" --tb=short 2>&1 | tail -30
R | git stash && git pull && git stash pop
H | cd "$(git rev-parse --show-toplevel)" && git status
R | echo "done" > log.txt && git add -A
H | cat <<'EOF' | python -\nprint(1)\nEOF
H | git log --oneline --graph --all | head -30
H | git diff HEAD -- src/ | head -100
H | git show --stat HEAD
H | git ls-files | wc -l
H | git grep -n "def main"
H | git config user.email
H | git remote -v
H | git log -1 --format=%cd
R | git checkout HEAD -- .
R | git reset --merge
R | git stash save "before refactor"
R | git stash apply stash@{0}
R | git revert HEAD --no-edit
R | git clean -xdf
R | git restore --worktree src/app.py
R | git checkout --theirs src/app.py
H | git merge-base main HEAD
H | git rev-list --count HEAD
H | gh pr view 123
H | gh pr create --title "x" --body "y"
R | gh pr checkout 123
H | npm ls react
H | npm outdated
R | npm update
R | npm uninstall lodash
H | npx vitest run
R | npx vitest -u
H | yarn build
H | yarn lint
R | yarn lint --fix
H | pnpm test
H | pnpm run typecheck
R | pnpm run lint:fix
H | python -m unittest discover -s tests
H | python -c "import app; print(app.__version__)"
R | python -c "from pathlib import Path; Path('existing.txt').write_text('x')"
R | python setup.py install
H | python --version
H | pip --version
H | pip check
R | pip uninstall -y requests
R | pip install --upgrade pip
H | pytest --lf -x
H | pytest --cov=src --cov-report=term-missing
H | coverage erase
H | tox -e py311
H | mypy src/ --ignore-missing-imports
H | flake8 src/
H | pylint src/app.py
H | isort --check-only --diff src/
R | isort src/
H | black --diff src/
R | autopep8 --in-place --aggressive src/app.py
H | cargo check
H | cargo clippy -- -D warnings
R | cargo clippy --fix --allow-dirty
R | cargo update
H | cargo tree
H | go vet ./...
R | go fmt ./...
H | go install golang.org/x/tools/cmd/goimports@latest
H | go list -m all
H | go mod download
H | rustc --version
H | node --version
H | docker build -t app .
H | docker logs app
R | docker cp app:/data/out.csv data.csv
H | curl -I https://example.com
H | wget https://example.com/file.tar.gz
R | tar xf release.tar
R | gunzip data.csv.gz
H | gzip -c data.csv > data.csv.gz
H | zcat logs.gz | grep ERROR
H | base64 -d <<< "aGVsbG8="
R | echo "print(1)" | python3 -c "import sys; exec(sys.stdin.read())"
R | echo '{}' > package.json
H | echo '{}' > new.json
H | touch src/__init__.py
H | mkdir -p tests && touch tests/__init__.py
R | rm -r tests/fixtures
R | rmdir empty && rm -f existing.txt
H | rmdir empty
R | find . -type f -name "*.log" -mtime +7 -exec rm {} \;
H | find . -maxdepth 2 -type d
R | find . -name "*.py" -exec sed -i 's/old/new/g' {} +
H | find . -name "*.py" -newer setup.py
R | ls | grep -v keep | xargs rm -rf
H | history | tail
H | cat ~/.bashrc
H | export PYTHONPATH=src && pytest
R | export X=1; rm existing.txt
H | alias ll='ls -la'
H | type git
H | command -v node
H | [ -f package.json ] && cat package.json
R | [ -f package.json ] && rm package.json
H | test -d .git && echo repo
H | cp -f README.md backup/README.md
R | cp README.md notes.md
H | scp user@host:/tmp/x.log /tmp/
H | ssh host "rm -rf /tmp/x"
R | sudo make install
H | make lint
H | make check
R | make format
R | make migrate
R | make fmt
R | just clean
H | just test
R | ./gradlew clean build
H | ./gradlew test
H | mvn -q test
R | mvn clean install
R | dotnet ef database update
H | dotnet test
R | php artisan migrate
H | php artisan route:list
R | php artisan make:controller UserController
R | composer require guzzlehttp/guzzle
R | mix ecto.migrate
H | mix test
R | flask db upgrade
R | django-admin startproject mysite
H | uvicorn app.main:app --reload
H | python -m http.server 8000
R | sqlite3 app.db "DELETE FROM users"
H | sqlite3 app.db ".tables"
H | psql -c "select 1"
H | redis-cli ping
H | htop
H | lsof -i :8000
H | netstat -tlnp
H | node -p "require('./package.json').version"
R | node -e "fs.writeFileSync('out.txt','x')"
H | jq -r '.dependencies | keys[]' package.json
R | jq '.version = "2.0"' package.json > tmp.json && mv tmp.json package.json
R | sed -i '' 's/x/y/' README.md
H | awk '/error/ {count++} END {print count}' log.txt
R | awk '{print > "existing.txt"}' data.csv
R | perl -i -pe 's/\r$//' src/app.py
H | sort -u data.csv
R | sort -o data.csv data.csv
H | cut -d, -f1 data.csv | sort | uniq
H | diff <(sort a.txt) <(sort b.txt)
R | diff <(rm x) y
H | watch -n 2 git status
H | tmux new -s work
H | clear
R | git stash && git checkout main
H | git checkout -
R | git checkout -- . && git clean -fd
R | yes | rm -i *.bak
H | true
H | exit 0
H | echo $?
H | set -euo pipefail; pytest
H | npm run test -- --watch=false
H | npm run test:unit
R | npm run db:migrate
R | npm run generate
H | npm start
R | npm run clean
R | npm version patch
H | bun test
R | bun install
H | bunx tsc --noEmit
R | deno fmt
H | deno test
R | terraform destroy -auto-approve
H | terraform validate
R | terraform init
H | helm list
H | aws s3 ls
H | gcloud config list
R | gzip -d data.csv.gz
H | gzip -dc data.csv.gz | head
R | git checkout HEAD~1 src/app.py
H | git checkout v1.2.0
H | git checkout origin/main -b local-copy
R | git reset --hard && git clean -fd
H | git diff --name-only | xargs -I{} echo {}
R | git diff --name-only | xargs sed -i 's/a/b/'
R | git ls-files -z | xargs -0 rm
H | git ls-files | xargs wc -l
R | git stash push --include-untracked -m "temp"
H | git stash show stash@{1} --stat
R | git rebase --onto main feature~3 feature
R | git merge --squash feature
R | git cherry-pick --abort
H | git cherry-pick --continue
R | git am --abort
R | git restore --staged --worktree .
H | git restore -S src/app.py
R | git clean -X -f
H | git clean --dry-run -d
R | git checkout --ours -- conflicted.py
H | git submodule update --init --recursive
H | git worktree add ../wt feature
R | git worktree remove ../wt --force
H | git bisect log
R | git bisect start HEAD v1.0
H | git notes add -m "reviewed"
H | git config --global core.editor vim
H | GIT_PAGER=cat git log -3
H | git -c color.ui=never diff
R | git --work-tree=. checkout -- .
R | cd .. && rm -rf project/build
H | cd ../other && git status
R | rm -- -weird-file
R | find . -name '*.bak' -print0 | xargs -0 rm -f
H | find . -name '*.py' -print0 | xargs -0 grep -l "TODO"
R | find build -mindepth 1 -delete
H | find . -empty -type d
H | echo "" > src/__init__.py
R | > existing.txt
H | > fresh.txt
R | exec > existing.txt 2>&1
H | exec 2>/dev/null
R | python -c 'import pathlib; [p.unlink() for p in pathlib.Path(".").glob("*.pyc")]'
R | python - <<'EOF'\nimport os\nos.remove("x")\nEOF
H | python -c "import sys; sys.exit(0)"
H | python -W ignore -m pytest
R | python -m pip uninstall -y pkg
H | python -m venv .venv2
R | python -m black .
H | python -m ruff check src
R | python -m ruff format src
H | python -m json.tool package.json
H | node -e 'const fs=require("fs"); console.log(fs.readFileSync("package.json","utf8"))'
R | node -e 'require("child_process").execSync("rm -rf dist")'
H | node --test
H | npx --yes cowsay hi
H | npx -y @biomejs/biome check .
R | npx @biomejs/biome check --write .
H | npm exec -- tsc --noEmit
H | pnpm exec vitest run
H | pnpm --filter web test
R | pnpm --filter web add react
H | yarn workspace web test
H | poetry run python -m pytest
R | poetry update
H | poetry show --tree
H | uv run --with rich python -c "print(1)"
R | uv lock --upgrade
H | uv tree
R | uv venv
H | cargo build 2>&1 | head -50
H | cargo test -- --nocapture
H | cargo install ripgrep
H | go test -run TestFoo ./pkg/...
H | go env GOPATH
R | go mod edit -replace foo=../foo
H | go mod why golang.org/x/text
R | bundle update rails
H | bundle exec rails test
R | bundle exec rails db:rollback
H | rails routes | grep users
R | rails db:seed
H | rails console
R | RAILS_ENV=test rails db:reset
R | php artisan migrate:fresh --seed
R | python manage.py flush --noinput
H | python manage.py showmigrations
R | python manage.py shell -c "from app.models import User; User.objects.all().delete()"
R | prisma db push
H | prisma validate
R | drizzle-kit push
R | sequelize db:migrate
R | typeorm migration:run
H | make -B all
H | make -n clean
R | make -k clean test
H | make build test
H | make -f Makefile.ci lint
R | docker compose run --rm app python manage.py migrate
H | docker exec -it app bash
H | sudo -u postgres psql -c "\l"
R | sudo -E pip install -e .
H | nice -n 10 pytest
R | nice -n 10 make clean
H | timeout --signal=KILL 30s npm test
R | timeout -k 5 30 rm -rf tmp/
H | watch -n1 'ls -la'
R | watch -n5 'rm -f *.tmp'
H | ( cd src; ls )
R | { rm -f a; rm -f b; }
H | { echo a; echo b; } > brand_new.log
R | { echo a; echo b; } > log.txt
H | f() { echo hi; }; f
H | while read -r line; do echo "$line"; done < data.csv
R | while read -r f; do rm "$f"; done < files.txt
H | case "$x" in a) echo a;; *) echo other;; esac
H | [[ -f package.json ]] && npm test
H | test -f existing.txt || echo missing
R | test -f existing.txt && rm existing.txt
H | echo "rm -rf /" | wc -c
H | echo $((1+2))
R | $EDITOR src/app.py
H | "$PYTHON" -m pytest
H | ./node_modules/.bin/jest
R | ./node_modules/.bin/prettier --write .
H | .venv/bin/python -m pytest
H | .venv/bin/pytest -q
R | .venv/bin/pip install httpx
H | history | grep git
H | ls -la | less
H | man git-reset
H | git help reset
R | truncate --size 0 log.txt
H | mkdir new_dir && cd new_dir && touch x
H | cp -r src backup
R | cp -rf src/* backup/
H | ln -s ../shared/config.yaml config.local.yaml
H | install -m 755 scripts/run.sh /usr/local/bin/run
H | chmod -R u+w .
H | tar -czvf archive.tar.gz --exclude=node_modules .
H | tar -xvf archive.tar -C /tmp/extract
H | unzip -l release.zip | head
R | unzip release.zip -d .
H | curl -sS localhost:8000/health | jq .
R | curl -L https://example.com/a.json > package.json
H | wget -qO- https://example.com | head
H | ssh-keygen -l -f key.pub
H | openssl rand -hex 16
H | date +%s > /dev/null
H | sleep 1; echo done
R | case "$1" in clean) rm -rf build;; esac
R | f() { rm -rf build; }; f
H | case x in\n  a|b) echo hi ;;\n  *) git status ;;\nesac
R | git submodule foreach git reset --hard
H | docker compose exec app pytest
R | docker compose run app rm -rf /app/x
H | git commit -qm "$(cat <<'EOF'\nFix the parser's bug\n\nCo-Authored-By: Claude\nEOF\n)"
H | gh pr create --title "Fix" --body "$(cat <<'EOF'\n## Summary\n- it's fixed (really)\nEOF\n)"
R | git commit -m "$(cat <<EOF\nmsg $(rm -rf x)\nEOF\n)"
R | npm run lint:format
H | npm run format:check
R | hatch run lint:fmt
H | twine check dist/*
"""


CASES = [(line[4:].replace("\\n", "\n"), line[0] == "R") for line in TABLE.strip().splitlines()]


# Lines the classifier gets wrong on purpose or cannot get right, with why.
KNOWN_MISSES = {
    # Code piped into an interpreter is unknown: the here-document could be anything.
    "cat <<'EOF' | python -\nprint(1)\nEOF",
    # A program the tables do not know may change files: unsure, so risky.
    "npx --yes cowsay hi",
    # A command named by a variable is unknown until the shell runs.
    '"$PYTHON" -m pytest',
}


FILES = [
    *("README.md", "notes.md", "existing.txt", "data.csv", "app.py", "config.yaml"),
    *("log.txt", "package.json", "src/app.py", "src/util.py", "build/out.o"),
    *("backup/app.py", ".venv/bin/activate", "scripts/run.sh", "scripts/setup.sh"),
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    (root / "empty").mkdir()
    return root


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 150
    assert len({c for c, _ in CASES}) == len(CASES), "a line appears twice"
    assert sum(r for _, r in CASES) > 100 and sum(not r for _, r in CASES) > 100


@pytest.mark.parametrize(("command", "risky"), CASES, ids=[c[:60] for c, _ in CASES])
def test_command_line(command: str, risky: bool, workspace: Path) -> None:
    if command in KNOWN_MISSES:
        pytest.xfail("known miss, see KNOWN_MISSES")
    verdict = classify(command, cwd=str(workspace))
    assert verdict.risky == risky, verdict.reason
    assert bool(verdict.reason) == risky


def test_error_counts(workspace: Path) -> None:
    """The counts the closing note reports: only the known misses are wrong."""
    wrong = {c for c, r in CASES if classify(c, cwd=str(workspace)).risky != r}
    assert wrong == KNOWN_MISSES


def test_project_patterns(workspace: Path) -> None:
    cwd = str(workspace)
    extra = ["terraform apply", "./deploy.sh*"]
    assert classify("terraform apply -auto-approve", risky_patterns=extra, cwd=cwd).risky
    assert classify("sudo terraform apply", risky_patterns=extra, cwd=cwd).reason == (
        "matches hooks.risky_commands 'terraform apply'"
    )
    assert classify("./deploy.sh --prod", risky_patterns=extra, cwd=cwd).risky
    assert not classify("echo terraform", risky_patterns=extra, cwd=cwd).risky
    harmless = ["./run_tests.sh", "make deploy"]
    assert classify("./run_tests.sh", cwd=cwd).risky
    assert not classify("./run_tests.sh -v", harmless_patterns=harmless, cwd=cwd).risky
    assert not classify("make deploy ENV=dev", harmless_patterns=harmless, cwd=cwd).risky
    # A harmless pattern clears the command, not its redirection or its $(…).
    assert classify("./run_tests.sh > existing.txt", harmless_patterns=harmless, cwd=cwd).risky
    assert classify("./run_tests.sh $(rm -rf x)", harmless_patterns=harmless, cwd=cwd).risky
    # Both match: risky wins.
    both = classify("make deploy", risky_patterns=["make deploy"], harmless_patterns=harmless)
    assert both.risky


def test_paths_are_unknown_without_a_folder() -> None:
    assert classify("echo x > out.txt").risky  # might exist
    assert not classify("echo x > /dev/null 2>&1").risky
    assert classify("git checkout src/app.py").risky
    assert not classify("git checkout main").risky


def test_cd_moves_the_folder(workspace: Path) -> None:
    cwd = str(workspace)
    assert classify("cd src && echo x > app.py", cwd=cwd).risky
    assert not classify("cd build && echo x > app.py", cwd=cwd).risky
    assert not classify("(cd src) && echo x > out.o", cwd=cwd).risky
    assert classify("cd build && echo x > out.o", cwd=cwd).risky
    assert classify("cd $DIR && echo x > out.o", cwd=cwd).risky  # unknown folder


@pytest.mark.parametrize(
    "line",
    ['echo "unclosed', "echo $(rm -rf x", "ls >", "cat <<", "`rm x"],
)
def test_unreadable_lines_are_risky(line: str) -> None:
    verdict = classify(line)
    assert verdict == Verdict(True, verdict.reason)
    assert verdict.reason.startswith("cannot read the command line")


def test_deep_nesting_is_risky_not_a_crash() -> None:
    line = "ls"
    for _ in range(20):
        line = f"bash -c {line!r}"
    assert classify(line).risky


def test_harmless_verdict_has_no_reason() -> None:
    assert classify("ls -la") == Verdict(False, "")
    assert classify("") == Verdict(False, "")
    assert classify("git reset --hard") == Verdict(True, "git reset --hard discards changes")
    assert classify("rm -rf build").reason == "rm removes files"


def test_the_classifier_imports_nothing_heavy() -> None:
    code = (
        "import sys, git_checkpoint.risk.classify as r; r.classify('git reset --hard && ls'); "
        "print(sorted({'click', 'yaml', 'pygit2'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    ).stdout
    assert out.strip() == "[]"


def test_config_accepts_both_pattern_lists(tmp_path: Path) -> None:
    from git_checkpoint.config.parse import parse_config_text
    from git_checkpoint.core.errors import UsageError

    text = "hooks:\n  risky_commands: ['terraform apply']\n  harmless_commands: ['./t.sh']\n"
    cfg = parse_config_text(text, tmp_path / ".checkpoint.yaml")
    assert cfg.risky_commands == ("terraform apply",)
    assert cfg.harmless_commands == ("./t.sh",)
    with pytest.raises(UsageError, match=r"hooks\.harmless_commands"):
        parse_config_text("hooks: {harmless_commands: ls}\n", tmp_path / ".checkpoint.yaml")


_PIECES = [
    *("git ", "rm ", "sed -i ", "find . ", "-exec ", "xargs ", "bash -c ", "python -c ", "cd "),
    *("npm ", "make ", "tar ", "curl -o ", "cp ", "mv ", "env ", "sudo ", "timeout 5 ", "dd "),
    *("of=", "tee ", "uv tool run ", "npx -c ", "flock ", "watch ", "trap ", "eval ", "awk "),
    *("-I{} ", "checkout ", "stash ", "reset --hard ", "perl -pi ", "case ", " in ", "esac "),
    *("f() ", "{ ", "} ", "docker compose run ", "a ", "-- ", "-C ", "x.txt ", "$X ", "* "),
    *(";", "&&", "||", "|", "&", "(", ")", "<", ">", ">>", "2>&1", "<<E\n", "\nE\n", ";;"),
    *("$(", "`", "'", '"', "\\", "#", "\n", "((", "))", "=", "~", "{}", "'x'", '"y"'),
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_no_line_breaks_a_rule(pieces: list[str]) -> None:
    """Whatever the line, a verdict: unreadable is risky, but no rule may crash."""
    verdict = classify("".join(pieces), cwd="/nonexistent")
    assert not verdict.reason.startswith("cannot judge"), verdict.reason


def test_scratch_files_outside_the_work_are_not_work(tmp_path: Path) -> None:
    scratch = tmp_path / "out.log"  # pytest's tmp_path is under /tmp (or TMPDIR)
    scratch.write_text("old log\n")
    project = "/nonexistent/project"  # work that is not in a temp folder
    assert not classify(f"pytest > {scratch} 2>&1", cwd=project).risky
    assert not classify(f"pytest 2>&1 | tee {scratch}", cwd=project).risky
    assert classify("date > /etc/hostname", cwd=project).risky
    # Work that lives in /tmp is still protected there.
    assert classify(f"pytest > {scratch.name}", cwd=str(tmp_path)).risky
    assert classify(f"pytest > {scratch}", cwd=str(tmp_path)).risky


# --- what the classifier reads without `re` (the hook path does not load it) -------------

ASSIGNMENT = r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?="


@given(st.text(alphabet="aZ_9[]+=é\n x-", max_size=10))
def test_a_variable_assignment_is_told_as_the_shell_grammar_says(word: str) -> None:
    import re

    from git_checkpoint.risk.classify import is_assignment

    assert is_assignment(word) == bool(re.match(ASSIGNMENT, word))


@pytest.mark.parametrize(
    "word",
    ["python3.12", "/usr/bin/python3", "pip3", "pypy3", "node18", "nodejs", "php8.1",
     "perl5.36", "python", "pythonx", "ruby3.2", "pip-3", "pip3.", "python3\n"],
)  # fmt: skip
def test_a_program_is_known_by_its_name_without_a_version(word: str) -> None:
    import os
    import re

    from git_checkpoint.risk.tables import program_name

    name = os.path.basename(word)
    expected = re.sub(r"^(python|pip|pypy|ruby|perl|php|node)[0-9.]*$", r"\1", name)
    assert program_name(word) == (name if name.endswith("\n") else expected)
