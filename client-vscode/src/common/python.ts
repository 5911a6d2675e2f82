// Finding the Python that runs the server and (importStrategy "fromEnvironment") checking that it
// can import coherence.  Nothing here installs anything: the bundled server (bundled.ts) needs no
// install step, and a bare-name `pip install coherence` would install whatever owns that name.
import { execFile } from 'child_process';
import { Disposable, Event, EventEmitter, Uri, extensions } from 'vscode';
import { IMPORT_CHECK_TIMEOUT_MS, PYTHON_EXTENSION_ID, SERVER_MODULE } from './constants';
import { traceError, traceInfo, traceVerbose, traceWarn } from './log';
import { getSettings } from './settings';
import type { PythonExtension } from '@vscode/python-extension';

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface Interpreter {
    /** The executable followed by any leading arguments. */
    command: string[];
    source: InterpreterSource;
}

export function defaultPython(): string {
    return process.platform === 'win32' ? 'python' : 'python3';
}

async function getPythonApi(): Promise<PythonExtension | undefined> {
    // Optional dependency: only touch the API when the Python extension is installed.
    if (!extensions.getExtension(PYTHON_EXTENSION_ID)) {
        return undefined;
    }
    try {
        const { PythonExtension } = await import('@vscode/python-extension');
        return await PythonExtension.api();
    } catch (error) {
        traceWarn('Could not use the Python extension API:', error);
        return undefined;
    }
}

async function interpreterFromPythonExtension(resource: Uri | undefined): Promise<string | undefined> {
    const api = await getPythonApi();
    if (!api) {
        return undefined;
    }
    try {
        const active = api.environments.getActiveEnvironmentPath(resource);
        const resolved = await api.environments.resolveEnvironment(active);
        return resolved?.executable.uri?.fsPath;
    } catch (error) {
        traceWarn('Could not resolve the Python extension interpreter:', error);
        return undefined;
    }
}

/**
 * The interpreter for the server: the `coherence.interpreter` setting, else the Python
 * extension's selected interpreter, else `python3` (`python` on Windows).
 */
export async function resolveInterpreter(resource: Uri | undefined): Promise<Interpreter> {
    const fromSetting = getSettings(resource).interpreter;
    if (fromSetting.length > 0) {
        return { command: fromSetting, source: 'setting' };
    }
    const fromExtension = await interpreterFromPythonExtension(resource);
    if (fromExtension) {
        return { command: [fromExtension], source: 'python-extension' };
    }
    return { command: [defaultPython()], source: 'default' };
}

const onDidChangePythonInterpreterEmitter = new EventEmitter<void>();
/** Fires when the Python extension's selected interpreter changes. */
export const onDidChangePythonInterpreter: Event<void> = onDidChangePythonInterpreterEmitter.event;

/** Subscribes to interpreter changes in the Python extension, if it is installed. */
export async function initializePython(disposables: Disposable[]): Promise<void> {
    const api = await getPythonApi();
    if (!api) {
        traceVerbose('Python extension not installed; not following its interpreter.');
        return;
    }
    disposables.push(
        onDidChangePythonInterpreterEmitter,
        api.environments.onDidChangeActiveEnvironmentPath((e) => {
            traceInfo(`Python extension interpreter changed: ${e.path}`);
            onDidChangePythonInterpreterEmitter.fire();
        }),
    );
}

export type ImportCheck = { ok: true } | { ok: false; notFound: boolean; detail: string };

/** Runs `<python> -c "import coherence"`. */
export function checkImportable(command: string[], cwd: string): Promise<ImportCheck> {
    const [exe, ...args] = command;
    if (!exe) {
        return Promise.resolve({ ok: false, notFound: true, detail: 'empty interpreter command' });
    }
    return new Promise((resolve) => {
        execFile(
            exe,
            [...args, '-c', `import ${SERVER_MODULE}`],
            { cwd, timeout: IMPORT_CHECK_TIMEOUT_MS, windowsHide: true },
            (error, _stdout, stderr) => {
                if (!error) {
                    resolve({ ok: true });
                    return;
                }
                const code = (error as NodeJS.ErrnoException).code;
                const detail = stderr.trim() || error.message;
                resolve({ ok: false, notFound: code === 'ENOENT' || code === 'EACCES', detail });
            },
        );
    });
}

export function logImportFailure(interpreter: Interpreter, check: ImportCheck): void {
    if (!check.ok) {
        traceError(
            `"${interpreter.command.join(' ')}" (from ${interpreter.source}) cannot import ${SERVER_MODULE}:\n${check.detail}`,
        );
    }
}
