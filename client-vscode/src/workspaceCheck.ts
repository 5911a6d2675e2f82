// Check Workspace asks first: the server's estimate (functions, samples to request, the price from
// litellm's map; cached results and replayed samples cost $0 and say so) in a modal, Continue or
// Cancel. Only Continue runs anything; the server then skips its own question ({confirmed: true}).
import { window } from 'vscode';
import { ServerCommands } from './common/constants';
import { traceError, traceInfo } from './common/log';

type Send = (command: string, args: unknown[]) => Promise<unknown>;

export const CONTINUE = 'Continue';

/** The fields of the server's `coherence.estimateWorkspace` reply this modal shows. */
export interface WorkspaceEstimate {
    message: string;
    functions: number;
    files: number;
    cachedResults: number;
    toCheck: number;
    samples: number;
    cachedSamples: number;
    usd: number | null;
}

function num(value: unknown): number {
    return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

export function parseEstimate(reply: unknown): WorkspaceEstimate | undefined {
    if (!reply || typeof reply !== 'object') {
        return undefined;
    }
    const r = reply as Record<string, unknown>;
    if (typeof r.message !== 'string') {
        return undefined;
    }
    return {
        message: r.message,
        functions: num(r.functions),
        files: num(r.files),
        cachedResults: num(r.cachedResults),
        toCheck: num(r.toCheck),
        samples: num(r.samples),
        cachedSamples: num(r.cachedSamples),
        usd: typeof r.usd === 'number' && Number.isFinite(r.usd) ? r.usd : null,
    };
}

/** The modal's detail lines: the figures behind the server's sentence. */
export function estimateDetail(e: WorkspaceEstimate): string {
    const cost = e.usd === null ? 'unknown (litellm has no price for the model)' : `about $${e.usd.toFixed(4)}`;
    return [
        `Functions: ${e.functions} in ${e.files} file(s), ${e.cachedResults} with cached results (free)`,
        `Samples to request: ${e.samples} (${e.cachedSamples} already cached, free)`,
        `Estimated cost: ${cost}`,
    ].join('\n');
}

export async function confirmCheckWorkspace(send: Send): Promise<unknown> {
    let estimate: WorkspaceEstimate | undefined;
    try {
        estimate = parseEstimate(await send(ServerCommands.estimateWorkspace, []));
    } catch (error) {
        traceError('Estimating Check Workspace failed:', error);
    }
    if (!estimate) {
        void window.showErrorMessage(
            'Coherence: could not estimate what checking the workspace would cost; nothing was started. See the output.',
        );
        return undefined;
    }
    if (estimate.functions === 0) {
        void window.showInformationMessage('Coherence: no marked functions in the workspace.');
        return undefined;
    }
    const choice = await window.showInformationMessage(
        estimate.message.replace(/^coherence: c/, 'Coherence: C'),
        { modal: true, detail: estimateDetail(estimate) },
        CONTINUE,
    );
    if (choice !== CONTINUE) {
        traceInfo('Check Workspace cancelled.');
        return { cancelled: true, estimate };
    }
    return send(ServerCommands.checkWorkspace, [{ confirmed: true }]);
}
