// The server the extension ships (importStrategy "useBundled"), as Microsoft's
// vscode-python-tools-extension-template and ruff-vscode do it: `bundled/libs` holds coherence and
// its pure-Python dependencies; the compiled ones (numpy, ...) come from a platform-specific .vsix's
// wheels for the interpreter's CPython (`bundled/native/cp3XX`, unpacked once into the extension's
// storage: no install, no network), else from the selected interpreter's environment when it has
// them (`bundled/tool/probe.py` says), else from a private environment the extension creates once in
// its global storage from the coherence wheel in `bundled/wheels`.  litellm (the `llm` extra) is not
// bundled: a configured model takes that private environment, which installs the wheel's `llm` extra.
// Nothing is ever installed by a bare name from an index, and nothing into the user's environment.
import { execFile, spawn } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { CancellationToken, ExtensionContext, ProgressLocation, window } from 'vscode';
import { IMPORT_CHECK_TIMEOUT_MS } from './constants';
import { traceError, traceInfo } from './log';

export interface Probe {
    ok: boolean;
    python: string;
    version: number[];
    missing: string[];
    reason: string;
    /** Where the .vsix's compiled wheels for this interpreter were unpacked ("" or absent: none). */
    native?: string;
    /** litellm is importable by the bundled server (the interpreter's environment has it). */
    llm?: boolean;
}

/** How the bundled server is started: `command` and `args`, run in the workspace folder. */
export interface ServerLaunch {
    command: string;
    args: string[];
    /** Where the server comes from, for the output channel. */
    describe: string;
    /** Environment variables the server is started with, beside VS Code's. */
    env?: Record<string, string>;
    /** Whether this server can sample from a model (litellm is importable). */
    llm: boolean;
}

/** How long creating the private environment may take (pip downloads numpy and litellm's wheels). */
const PRIVATE_ENV_TIMEOUT_MS = 15 * 60 * 1000;
/** The marker written once the private environment is complete (an interrupted one is rebuilt). */
const COMPLETE = '.coherence-complete';

function bundledDir(context: ExtensionContext): string {
    return path.join(context.extensionPath, 'bundled');
}

/** Where `bundled/tool/_native.py` unpacks the .vsix's compiled wheels: the extension's storage. */
function nativeEnv(context: ExtensionContext): Record<string, string> {
    return { COHERENCE_NATIVE_DIR: path.join(context.globalStorageUri.fsPath, 'native') };
}

/** The coherence wheel shipped in the .vsix (named in bundled/binary.json). */
export function bundledWheel(context: ExtensionContext): string | undefined {
    try {
        const info = JSON.parse(fs.readFileSync(path.join(bundledDir(context), 'binary.json'), 'utf8')) as {
            wheel?: unknown;
        };
        const wheel = typeof info.wheel === 'string' ? path.join(bundledDir(context), 'wheels', info.wheel) : undefined;
        return wheel && fs.existsSync(wheel) ? wheel : undefined;
    } catch {
        return undefined;
    }
}

/** Runs `<python> bundled/tool/probe.py`: can this interpreter run the bundled server? */
export function probe(context: ExtensionContext, interpreter: string[], cwd: string): Promise<Probe> {
    const [exe, ...lead] = interpreter;
    const script = path.join(bundledDir(context), 'tool', 'probe.py');
    const failed = (reason: string): Probe => ({ ok: false, python: exe ?? '', version: [], missing: [], reason });
    if (!exe) {
        return Promise.resolve(failed('empty interpreter command'));
    }
    return new Promise((resolve) => {
        execFile(
            exe,
            [...lead, script],
            {
                cwd,
                timeout: IMPORT_CHECK_TIMEOUT_MS,
                windowsHide: true,
                env: { ...process.env, ...nativeEnv(context) },
            },
            (error, stdout, stderr) => {
                const line = stdout.trim().split('\n').pop() ?? '';
                try {
                    resolve(JSON.parse(line) as Probe);
                } catch {
                    const code = (error as NodeJS.ErrnoException | null)?.code;
                    resolve(
                        failed(
                            code === 'ENOENT'
                                ? `the interpreter ${exe} was not found`
                                : stderr.trim() || (error?.message ?? 'no answer'),
                        ),
                    );
                }
            },
        );
    });
}

function venvPython(dir: string): string {
    return process.platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
}

/** Runs a command with its output in the Coherence channel; rejects on a non-zero exit. */
function run(
    command: string,
    args: string[],
    cwd: string,
    token: CancellationToken,
    onLine: (line: string) => void = () => undefined,
): Promise<void> {
    return new Promise((resolve, reject) => {
        traceInfo(`> ${[command, ...args].join(' ')}`);
        const child = spawn(command, args, {
            cwd,
            windowsHide: true,
            env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' },
        });
        const timer = setTimeout(() => child.kill(), PRIVATE_ENV_TIMEOUT_MS);
        const cancel = token.onCancellationRequested(() => child.kill());
        const forward = (chunk: Buffer): void => {
            for (const line of chunk.toString('utf8').split(/\r?\n/)) {
                if (line.trim()) {
                    traceInfo(line);
                    onLine(line.trim());
                }
            }
        };
        child.stdout.on('data', forward);
        child.stderr.on('data', forward);
        child.on('error', (e) => reject(e));
        child.on('close', (code, signal) => {
            clearTimeout(timer);
            cancel.dispose();
            if (code === 0) resolve();
            else
                reject(
                    new Error(
                        `${path.basename(command)} ${args[0] === '-m' ? args[1] : ''} exited with ${code ?? signal}`,
                    ),
                );
        });
    });
}

/**
 * The private environment for `probed.python`: `<globalStorage>/envs/<key>`, made with
 * `<python> -m venv` and the shipped coherence wheel with its `llm` extra (`pip install
 * '<wheel file>[llm]'`; pip takes its dependencies, numpy and litellm's, from the package index by
 * the wheel's own requirements).  Made once per interpreter and wheel; returns its Python.
 */
export async function ensurePrivateEnv(context: ExtensionContext, probed: Probe, cwd: string): Promise<string> {
    const wheel = bundledWheel(context);
    if (!wheel) {
        throw new Error('the extension ships no coherence wheel (bundled/wheels)');
    }
    const key = createHash('sha256')
        .update(
            `${probed.python}\0${probed.version.join('.')}\0${path.basename(wheel)}\0${fs.statSync(wheel).size}\0llm`,
        )
        .digest('hex')
        .slice(0, 16);
    const dir = path.join(context.globalStorageUri.fsPath, 'envs', key);
    const python = venvPython(dir);
    if (fs.existsSync(path.join(dir, COMPLETE)) && fs.existsSync(python)) {
        return python;
    }
    // The notification can be hidden (it hides itself into the notification centre), so the status
    // bar shows the same progress until the environment is ready.
    let windowProgress: ((message: string) => void) | undefined;
    let finished = false;
    let windowDone: () => void = () => undefined;
    void window.withProgress({ location: ProgressLocation.Window, title: 'Coherence: preparing the server' }, (p) => {
        windowProgress = (message) => p.report({ message });
        return new Promise<void>((resolve) => {
            windowDone = resolve;
            if (finished) resolve();
        });
    });
    const wheelFile: string = wheel;
    const prepare = (): Thenable<void> =>
        window.withProgress(
            {
                location: ProgressLocation.Notification,
                title: "Coherence: preparing the server (once, in the extension's own storage)",
                cancellable: true,
            },
            async (progress, token) => {
                // pip's "Collecting x" / "Installing collected packages" lines: what it is doing now
                const report = (line: string): void => {
                    if (/^(Collecting|Downloading|Installing|Building|Using cached)\b/.test(line)) {
                        const message = line.slice(0, 100);
                        progress.report({ message });
                        windowProgress?.(message);
                    }
                };
                const started = Date.now();
                fs.rmSync(dir, { recursive: true, force: true });
                fs.mkdirSync(path.dirname(dir), { recursive: true });
                progress.report({ message: `creating an environment from ${probed.python}…` });
                await run(probed.python, ['-m', 'venv', dir], cwd, token);
                progress.report({ message: `installing ${path.basename(wheelFile)} with numpy and litellm…` });
                await run(python, ['-m', 'pip', 'install', '--no-input', `${wheelFile}[llm]`], cwd, token, report);
                fs.writeFileSync(path.join(dir, COMPLETE), `${path.basename(wheelFile)}\n`);
                traceInfo(`Private environment ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${dir}`);
            },
        );
    try {
        await prepare();
    } finally {
        finished = true;
        windowDone();
    }
    return python;
}

/**
 * How to start the bundled server with `interpreter`: `<python> bundled/tool/serve.py` when the
 * .vsix's wheels or its environment give the compiled dependencies (and litellm, when `wantsLlm`: a
 * model is configured), else `<private env python> -m coherence serve`.
 */
export async function bundledLaunch(
    context: ExtensionContext,
    interpreter: string[],
    cwd: string,
    wantsLlm = false,
): Promise<ServerLaunch> {
    const probed = await probe(context, interpreter, cwd);
    if (probed.ok && (probed.llm || !wantsLlm)) {
        const [command, ...lead] = interpreter;
        const from = probed.native
            ? `with the compiled dependencies from the extension (${probed.native})`
            : `with ${probed.python}'s environment`;
        return {
            command: command ?? '',
            args: [...lead, path.join(bundledDir(context), 'tool', 'serve.py')],
            describe: `the bundled server, ${from}`,
            env: nativeEnv(context),
            llm: probed.llm === true,
        };
    }
    if (!probed.version.length) {
        throw new Error(probed.reason);
    }
    if (probed.version[0] !== 3 || (probed.version[1] ?? 0) < 10) {
        throw new Error(`${probed.python} is Python ${probed.version.join('.')}; coherence needs Python 3.10 or later`);
    }
    traceInfo(
        probed.ok
            ? `A model is configured and the bundled server has no litellm: using a private environment with the llm extra.`
            : `${probed.python} cannot run the bundled server here (${probed.reason}): using a private environment.`,
    );
    try {
        const python = await ensurePrivateEnv(context, probed, cwd);
        return {
            command: python,
            args: ['-m', 'coherence', 'serve'],
            describe: `the bundled wheel in a private environment (${python})`,
            llm: true,
        };
    } catch (error) {
        traceError('Creating the private environment failed:', error);
        throw new Error(
            `could not prepare a private environment from ${probed.python}: ${String(error instanceof Error ? error.message : error)}`,
            { cause: error },
        );
    }
}
