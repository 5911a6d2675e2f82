// Names shared by the extension's modules. Keep in sync with package.json.

/** `<publisher>.<name>` from package.json. */
export const EXTENSION_ID = 'coherence.coherence';

/** Client id: also the prefix of the `<id>.trace.server` setting read by vscode-languageclient. */
export const SERVER_ID = 'coherence';
export const SERVER_NAME = 'Coherence';
/** The Python module started as `<python> -m coherence serve`. */
export const SERVER_MODULE = 'coherence';
export const SERVER_ARGS: readonly string[] = ['-m', SERVER_MODULE, 'serve'];

/** Configuration section of every setting; also sent to the server on change. */
export const CONFIG_SECTION = 'coherence';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

/** Commands the server provides (executed through workspace/executeCommand). */
export const ServerCommands = {
    checkFunction: 'coherence.checkFunction',
    checkFile: 'coherence.checkFile',
    checkWorkspace: 'coherence.checkWorkspace',
    estimateWorkspace: 'coherence.estimateWorkspace',
    clearCache: 'coherence.clearCache',
    showLastResult: 'coherence.showLastResult',
    showAlternatives: 'coherence.showAlternatives',
} as const;

/** Commands registered by the client itself. */
export const ClientCommands = {
    restart: 'coherence.restart',
    showOutput: 'coherence.showOutput',
    nextAlternative: 'coherence.nextAlternative',
    previousAlternative: 'coherence.previousAlternative',
} as const;

/** Server commands that act on the active editor when run without arguments. */
export const EDITOR_COMMANDS: ReadonlySet<string> = new Set([
    ServerCommands.checkFunction,
    ServerCommands.checkFile,
    ServerCommands.showAlternatives,
]);

/** Context key set while the server runs; package.json shows the server commands in the palette only then. */
export const CONTEXT_SERVER_RUNNING = 'coherence.serverRunning';

/** Server -> client notification with the counts shown in the status bar. */
export const STATUS_NOTIFICATION = 'coherence/status';

/** How long `<python> -c "import coherence"` may take before it counts as failed. */
export const IMPORT_CHECK_TIMEOUT_MS = 30_000;
