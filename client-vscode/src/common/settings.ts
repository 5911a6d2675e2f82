// The "coherence" settings: reading them with their defaults, resolving ${workspaceFolder}-style
// variables in path-valued ones, and deciding which changes need a server restart.
import * as os from 'os';
import * as path from 'path';
import { ConfigurationChangeEvent, ConfigurationScope, Uri, WorkspaceFolder, window, workspace } from 'vscode';
import { CONFIG_SECTION } from './constants';

export type RunOn = 'save' | 'change' | 'manual';
export type Markers = 'marked' | 'docstring';
export type TraceLevel = 'off' | 'messages' | 'verbose';

/**
 * Every setting under "coherence", with the shape `workspace.getConfiguration('coherence')` has:
 * this object is what the server gets as `initializationOptions.settings` and, per scope, from
 * `workspace/configuration` with section "coherence".
 */
export interface CoherenceSettings {
    interpreter: string[];
    model: string;
    apiBase: string;
    replay: string;
    temperature: number;
    samples: number;
    inputs: number;
    callTimeout: number;
    runOn: RunOn;
    debounceMs: number;
    markers: Markers;
    executionInterpreter: string;
    maxConcurrentChecks: number;
    cacheDir: string;
    serverInstallSource: string;
    trace: { server: TraceLevel };
}

export const DEFAULT_SETTINGS: Readonly<CoherenceSettings> = {
    interpreter: [],
    model: '',
    apiBase: '',
    replay: '',
    temperature: 0.6,
    samples: 10,
    inputs: 1000,
    callTimeout: 1.0,
    runOn: 'save',
    debounceMs: 800,
    markers: 'marked',
    executionInterpreter: '',
    maxConcurrentChecks: 2,
    cacheDir: '',
    serverInstallSource: 'coherence',
    trace: { server: 'off' },
};

/** Settings holding a path, in which `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and `~` are expanded. */
const PATH_SETTINGS = ['replay', 'executionInterpreter', 'cacheDir', 'serverInstallSource'] as const;

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

function pick<T>(value: unknown, fallback: T, valid: (v: unknown) => boolean): T {
    return valid(value) ? (value as T) : fallback;
}

const isString = (v: unknown): boolean => typeof v === 'string';
const isNumber = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isInteger = (v: unknown): boolean => Number.isInteger(v);
const oneOf =
    (...allowed: string[]) =>
    (v: unknown): boolean =>
        typeof v === 'string' && allowed.includes(v);

/**
 * Returns the settings for `scope` with defaults filled in for missing or ill-typed values and
 * variables resolved in path-valued settings and in `interpreter`.
 */
export function getSettings(scope?: ConfigurationScope): CoherenceSettings {
    const config = workspace.getConfiguration(CONFIG_SECTION, scope ?? getProjectRoot()?.uri);
    const d = DEFAULT_SETTINGS;
    const raw = (key: string): unknown => config.get(key);
    const interpreter = raw('interpreter');
    const settings: CoherenceSettings = {
        interpreter:
            Array.isArray(interpreter) && interpreter.every((s) => typeof s === 'string')
                ? interpreter.filter((s) => s.trim() !== '')
                : [],
        model: pick(raw('model'), d.model, isString),
        apiBase: pick(raw('apiBase'), d.apiBase, isString),
        replay: pick(raw('replay'), d.replay, isString),
        temperature: pick(raw('temperature'), d.temperature, isNumber),
        samples: pick(raw('samples'), d.samples, isInteger),
        inputs: pick(raw('inputs'), d.inputs, isInteger),
        callTimeout: pick(raw('callTimeout'), d.callTimeout, isNumber),
        runOn: pick(raw('runOn'), d.runOn, oneOf('save', 'change', 'manual')),
        debounceMs: pick(raw('debounceMs'), d.debounceMs, isInteger),
        markers: pick(raw('markers'), d.markers, oneOf('marked', 'docstring')),
        executionInterpreter: pick(raw('executionInterpreter'), d.executionInterpreter, isString),
        maxConcurrentChecks: pick(raw('maxConcurrentChecks'), d.maxConcurrentChecks, isInteger),
        cacheDir: pick(raw('cacheDir'), d.cacheDir, isString),
        serverInstallSource: pick(raw('serverInstallSource'), d.serverInstallSource, isString),
        trace: { server: pick(raw('trace.server'), d.trace.server, oneOf('off', 'messages', 'verbose')) },
    };
    return resolvePaths(settings, folderFor(scope));
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

/** Resolves variables in a `workspace/configuration` answer for the "coherence" section. */
export function resolveConfigurationItem(item: unknown, scopeUri: string | undefined): unknown {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
        return item;
    }
    const folder = scopeUri ? folderFor(Uri.parse(scopeUri)) : getProjectRoot();
    return resolvePaths(item, folder);
}

/** Only the interpreter that runs the server needs a restart; the server re-reads everything else. */
export function needsRestart(e: ConfigurationChangeEvent): boolean {
    return e.affectsConfiguration(`${CONFIG_SECTION}.interpreter`);
}
