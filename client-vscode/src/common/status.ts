// The status bar item: server state plus the counts of the `coherence/status` notification.
import { Disposable, MarkdownString, StatusBarAlignment, StatusBarItem, ThemeColor, window } from 'vscode';
import { ClientCommands } from './constants';

/** Params of the server's `coherence/status` notification. */
export interface StatusParams {
    checking: number;
    incoherent: number;
    // incoherent functions by the verdict's severity (the same scale as the Problems entries)
    warning: number;
    information: number;
    hint: number;
    coherent: number;
    skipped: number;
    // which sandbox ran the generated code, e.g. "bwrap+landlock+seccomp" or "guard+landlock+seccomp"
    sandbox?: string;
    // what this window has spent on samples (litellm's prices), and its cap (coherence.maxCostUsd)
    spentUsd: number;
    maxCostUsd?: number;
}

export type ServerState =
    { kind: 'starting' } | { kind: 'running' } | { kind: 'disabled' } | { kind: 'error'; message: string };

function count(value: unknown): number {
    return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function usd(value: unknown): number | undefined {
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** The tooltip's line about money: the window's running total against its cap. */
export function spendingLine(counts: StatusParams): string {
    const spent = `$${counts.spentUsd.toFixed(4)}`;
    return counts.maxCostUsd !== undefined
        ? `spent in this window: ${spent} of the $${counts.maxCostUsd.toFixed(2)} cap (\`coherence.maxCostUsd\`)`
        : `spent in this window: ${spent} (no cap: \`coherence.maxCostUsd\`)`;
}

/** Accepts any object and reads the four counts from it, treating missing or bad ones as 0. */
export function parseStatusParams(params: unknown): StatusParams {
    const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
    return {
        checking: count(p.checking),
        incoherent: count(p.incoherent),
        warning: count(p.warning),
        information: count(p.information),
        hint: count(p.hint),
        coherent: count(p.coherent),
        skipped: count(p.skipped),
        // names only (letters, +, comma, space): it is shown in a tooltip
        sandbox: typeof p.sandbox === 'string' ? p.sandbox.replace(/[^a-z+, ]/g, '').slice(0, 120) : undefined,
        spentUsd: usd(p.spentUsd) ?? 0,
        maxCostUsd: usd(p.maxCostUsd),
    };
}

export class StatusBar implements Disposable {
    private readonly item: StatusBarItem;
    private state: ServerState = { kind: 'starting' };
    private counts: StatusParams = parseStatusParams({});

    constructor() {
        this.item = window.createStatusBarItem('coherence.status', StatusBarAlignment.Right, 100);
        this.item.name = 'Coherence';
        this.item.command = ClientCommands.showOutput;
        this.render();
        this.item.show();
    }

    setState(state: ServerState): void {
        this.state = state;
        if (state.kind === 'starting') {
            // A new server knows nothing yet: forget the previous one's counts.
            this.counts = parseStatusParams({});
        } else if (state.kind !== 'running') {
            this.counts = { ...this.counts, checking: 0 };
        }
        this.render();
    }

    setCounts(counts: StatusParams): void {
        this.counts = counts;
        this.render();
    }

    private render(): void {
        const { checking, warning, information, hint, coherent, skipped } = this.counts;
        const tooltip = new MarkdownString('', true);
        this.item.backgroundColor = undefined;
        switch (this.state.kind) {
            case 'starting':
                this.item.text = '$(sync~spin) coherence: starting…';
                tooltip.appendMarkdown('Coherence: starting the language server');
                break;
            case 'disabled':
                this.item.text = '$(circle-slash) coherence: off';
                tooltip.appendMarkdown('Coherence is turned off here (`coherence.enable`)');
                break;
            case 'error':
                this.item.text = '$(error) coherence';
                this.item.backgroundColor = new ThemeColor('statusBarItem.errorBackground');
                tooltip.appendText(`Coherence: ${this.state.message}`);
                break;
            case 'running':
                if (checking > 0) {
                    this.item.text = '$(sync~spin) coherence: checking…';
                } else if (warning > 0) {
                    this.item.text = `$(warning) coherence: ${warning} warning${warning === 1 ? '' : 's'}`;
                } else if (information > 0) {
                    this.item.text = `$(info) coherence: ${information} to look at`;
                } else {
                    this.item.text = '$(check) coherence';
                }
                tooltip.appendMarkdown(
                    `**Coherence**\n\n` +
                        `- checking: ${checking}\n` +
                        `- warning: ${warning}\n` +
                        `- information: ${information}\n` +
                        `- hint: ${hint}\n` +
                        `- coherent: ${coherent}\n` +
                        `- skipped: ${skipped}\n` +
                        (this.counts.sandbox ? `\nsandbox: ${this.counts.sandbox}\n` : '') +
                        `\n${spendingLine(this.counts)}\n`,
                );
                break;
        }
        tooltip.appendMarkdown('\n\nClick to show the output.');
        this.item.tooltip = tooltip;
    }

    dispose(): void {
        this.item.dispose();
    }
}
