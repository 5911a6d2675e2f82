// The "coherence" settings: the few the client acts on, the explicitly set ones the server gets,
// ${workspaceFolder}-style variables in path-valued ones, and which changes need a server restart.
// The keys, types and defaults are spelled once, in the server's Settings dataclass; package.json
// is checked against it (tests/lsp/test_settings_schema.py), and this file reads package.json.
import * as os from 'os';
import * as path from 'path';
import { isEditorModel } from '../editorModels';
import {
    ConfigurationChangeEvent,
    ConfigurationScope,
    Uri,
    WorkspaceFolder,
    extensions,
    window,
    workspace,
} from 'vscode';
import { CONFIG_SECTION, EXTENSION_ID } from './constants';

export type ImportStrategy = 'useBundled' | 'fromEnvironment';

/** The settings the client itself acts on (the server reads the others, see `explicitSettings`). */
export interface ClientSettings {
    enable: boolean;
    interpreter: string[];
    importStrategy: ImportStrategy;
}

/** Settings holding a path, in which `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and `~` are expanded. */
const PATH_SETTINGS = ['replay', 'executionInterpreter', 'cacheDir'] as const;

/** Every "coherence.*" key package.json declares (it is checked against the server's Settings dataclass). */
function declaredKeys(): string[] {
    const manifest = extensions.getExtension(EXTENSION_ID)?.packageJSON as
        { contributes?: { configuration?: { properties?: Record<string, unknown> } } } | undefined;
    const properties = manifest?.contributes?.configuration?.properties;
    return Object.keys(properties ?? {})
        .filter((k) => k.startsWith(`${CONFIG_SECTION}.`))
        .map((k) => k.slice(CONFIG_SECTION.length + 1));
}

/** The workspace folder a server-wide setting is read for: the first one, if any. */
export function getProjectRoot(): WorkspaceFolder | undefined {
    return workspace.workspaceFolders?.[0];
}

/** The directory the server is started in. */
export function getServerCwd(): string {
    const root = getProjectRoot();
    if (root && root.uri.scheme === 'file') {
        return root.uri.fsPath;
    }
    const active = window.activeTextEditor?.document.uri;
    if (active && active.scheme === 'file') {
        return path.dirname(active.fsPath);
    }
    return os.homedir();
}

export function resolveVariables(value: string, folder: WorkspaceFolder | undefined): string {
    const home = os.homedir();
    let result = value.replace(
        /\$\{(workspaceFolder|userHome|env:([^}]+))\}/g,
        (match, name: string, envName?: string) => {
            if (name === 'workspaceFolder') {
                return folder?.uri.fsPath ?? match;
            }
            if (name === 'userHome') {
                return home;
            }
            return envName !== undefined ? (process.env[envName] ?? '') : match;
        },
    );
    if (result === '~' || result.startsWith('~/') || result.startsWith('~\\')) {
        result = path.join(home, result.slice(1));
    }
    return result;
}

function folderFor(scope: ConfigurationScope | undefined): WorkspaceFolder | undefined {
    if (scope instanceof Uri) {
        return workspace.getWorkspaceFolder(scope) ?? getProjectRoot();
    }
    if (scope && 'uri' in scope && scope.uri instanceof Uri) {
        return workspace.getWorkspaceFolder(scope.uri) ?? getProjectRoot();
    }
    return getProjectRoot();
}

/** The settings the client acts on, with package.json's defaults for unset or ill-typed values. */
export function getSettings(scope?: ConfigurationScope): ClientSettings {
    const config = workspace.getConfiguration(CONFIG_SECTION, scope ?? getProjectRoot()?.uri);
    const interpreter = config.get<unknown>('interpreter');
    const strategy = config.get<unknown>('importStrategy');
    return {
        enable: config.get<unknown>('enable') !== false,
        interpreter:
            Array.isArray(interpreter) && interpreter.every((s) => typeof s === 'string')
                ? interpreter.filter((s) => s.trim() !== '').map((s) => resolveVariables(s, folderFor(scope)))
                : [],
        importStrategy: strategy === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled',
    };
}

/**
 * What the server gets, as `initializationOptions.settings` and for `workspace/configuration`:
 * every declared key, with the value the user set (at any level, per `inspect`) or `null` when
 * they set none. So an explicit value wins over pyproject even when it equals the default, and an
 * unset one leaves pyproject alone (the server's Settings dataclass holds the defaults).
 */
export function explicitSettings(scope?: ConfigurationScope): Record<string, unknown> {
    const config = workspace.getConfiguration(CONFIG_SECTION, scope ?? getProjectRoot()?.uri);
    const out: Record<string, unknown> = {};
    for (const key of declaredKeys()) {
        const i = config.inspect(key);
        const value = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue ?? null;
        const [head, ...rest] = key.split('.');
        if (head === undefined) continue;
        if (rest.length === 0) {
            out[head] = value;
        } else {
            // `trace.server` -> { trace: { server } }, the shape getConfiguration gives.
            const inner = (out[head] ?? {}) as Record<string, unknown>;
            inner[rest.join('.')] = value;
            out[head] = inner;
        }
    }
    return resolvePaths(out, folderFor(scope));
}

/** Resolves variables in `interpreter` and the path-valued settings of a settings-shaped object. */
export function resolvePaths<T extends object>(settings: T, folder: WorkspaceFolder | undefined): T {
    const result = { ...settings } as Record<string, unknown>;
    for (const key of PATH_SETTINGS) {
        const value = result[key];
        if (typeof value === 'string' && value !== '') {
            result[key] = resolveVariables(value, folder);
        }
    }
    const interpreter = result.interpreter;
    if (Array.isArray(interpreter)) {
        result.interpreter = interpreter.map((s: unknown) => (typeof s === 'string' ? resolveVariables(s, folder) : s));
    }
    return result as T;
}

/** The answer to a `workspace/configuration` item for the "coherence" section: the explicit settings of its scope. */
export function configurationItem(scopeUri: string | undefined): unknown {
    return explicitSettings(scopeUri ? Uri.parse(scopeUri) : getProjectRoot()?.uri);
}

/** Whether coherence.enable is true in some workspace folder (or the window, with none): the server
 * runs then, and leaves out the folders where it is false (it reads each folder's settings). */
export function enabledInSomeFolder(): boolean {
    const folders = workspace.workspaceFolders ?? [];
    return folders.length === 0 ? getSettings().enable : folders.some((f) => getSettings(f.uri).enable);
}

/** What the server runs from needs a restart (or a stop); the server re-reads everything else. */
export function needsRestart(e: ConfigurationChangeEvent): boolean {
    return ['enable', 'interpreter', 'importStrategy'].some((k) => e.affectsConfiguration(`${CONFIG_SECTION}.${k}`));
}

/** Whether coherence.model or coherence.models is set for the window or some folder: the server
 * then samples from a model, which needs litellm (not in the bundle; see bundled.ts). */
export function modelConfigured(): boolean {
    const scopes: (Uri | undefined)[] = [undefined, ...(workspace.workspaceFolders ?? []).map((f) => f.uri)];
    return scopes.some((scope) => {
        const config = workspace.getConfiguration(CONFIG_SECTION, scope);
        const model = config.get<unknown>('model');
        const models = config.get<unknown>('models');
        // the editor's own models need no litellm
        return (
            (typeof model === 'string' && model.trim() !== '' && !isEditorModel(model)) ||
            (Array.isArray(models) && models.length > 0)
        );
    });
}

/** A change that may configure a model (which a server without litellm must restart for). */
export function affectsModel(e: ConfigurationChangeEvent): boolean {
    return ['model', 'models'].some((k) => e.affectsConfiguration(`${CONFIG_SECTION}.${k}`));
}
