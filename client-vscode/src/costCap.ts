// The server asks, when the user raised the cost cap from its question, that the new cap be written
// to `coherence.maxCostUsd` in the workspace settings: the raise then survives a restart. The server
// never writes the user's files; this is the extension doing it, for that one setting only. The
// server learns it may ask from `initializationOptions.raiseCostCap`.
import { ConfigurationTarget, workspace } from 'vscode';
import { CONFIG_SECTION } from './common/constants';
import { traceError, traceInfo } from './common/log';

/** Server -> client request: `{maxCostUsd: number}`; the reply says whether it was written. */
export const RAISE_COST_CAP_REQUEST = 'coherence/raiseCostCap';
/** package.json's maximum for coherence.maxCostUsd. */
const MAX_CAP_USD = 1_000_000;

export interface RaiseReply {
    written: boolean;
    error?: string;
}

/** The cap the server asks for, or undefined when it is no valid value of the setting. */
export function requestedCap(params: unknown): number | undefined {
    const value = (params as { maxCostUsd?: unknown } | null)?.maxCostUsd;
    return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_CAP_USD ? value : undefined;
}

export async function raiseCostCap(params: unknown): Promise<RaiseReply> {
    const cap = requestedCap(params);
    if (cap === undefined) {
        return { written: false, error: `not a valid cap: ${JSON.stringify(params)}` };
    }
    if (!workspace.workspaceFolders?.length) {
        return { written: false, error: 'no workspace is open to hold the setting' };
    }
    try {
        await workspace.getConfiguration(CONFIG_SECTION).update('maxCostUsd', cap, ConfigurationTarget.Workspace);
        traceInfo(`coherence.maxCostUsd set to ${cap} in the workspace settings (raised from the server's question).`);
        return { written: true };
    } catch (error) {
        traceError('Writing coherence.maxCostUsd failed:', error);
        return { written: false, error: error instanceof Error ? error.message : String(error) };
    }
}
