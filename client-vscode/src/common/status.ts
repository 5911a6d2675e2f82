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
    nondeterministic: number;
    // functions that could not be checked (no finding to show), and those whose latest check failed
    // while an earlier finding stays shown
    errors: number;
    failed: number;
    // which sandbox ran the generated code, e.g. "bwrap+landlock+seccomp" or "guard+landlock+seccomp"
    sandbox?: string;
    // what this window has spent on samples (litellm's prices), and its cap (coherence.maxCostUsd)
    spentUsd: number;
    maxCostUsd?: number;
}

export type ServerState =
    | { kind: 'starting' }
    | { kind: 'running' }
    | { kind: 'disabled' }
    | { kind: 'untrusted' }
    | { kind: 'error'; message: string };

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
        nondeterministic: count(p.nondeterministic),
        errors: count(p.errors),
        failed: count(p.failed),
        // names only (letters, +, comma, space): it is shown in a tooltip
        sandbox: typeof p.sandbox === 'string' ? p.sandbox.replace(/[^a-z+, ]/g, '').slice(0, 120) : undefined,
        spentUsd: usd(p.spentUsd) ?? 0,
        maxCostUsd: usd(p.maxCostUsd),
    };
}

function plural(n: number, one: string, many: string): string {
    return `${n} ${n === 1 ? one : many}`;
}

/** The item's text while the server runs: what is known, never more. */
export function runningText(c: StatusParams): string {
    if (c.checking > 0) {
        return '$(sync~spin) coherence: checking…';
    }
    const known = c.warning + c.information + c.hint + c.coherent + c.skipped + c.nondeterministic + c.errors;
    if (known === 0) {
        return '$(circle-large-outline) coherence: not checked yet';
    }
    const parts: string[] = [];
    if (c.warning > 0) {
        parts.push(plural(c.warning, 'warning', 'warnings'));
    }
    if (c.information > 0) {
        parts.push(`${c.information} to look at`);
    }
    const troubled = c.errors + c.failed;
    if (troubled > 0) {
        parts.push(plural(troubled, 'error', 'errors'));
    }
    if (parts.length === 0) {
        return `$(check) coherence: ${plural(c.coherent + c.hint, 'function', 'functions')} checked, no warnings`;
    }
    const icon = c.warning > 0 ? '$(warning)' : troubled > 0 ? '$(error)' : '$(info)';
    return `${icon} coherence: ${parts.join(', ')}`;
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
        this.item.command = ClientCommands.showOutput;
        switch (this.state.kind) {
            case 'untrusted':
                this.item.text = '$(shield) coherence: off: trust this folder to check';
                this.item.command = 'workbench.trust.manage';
                tooltip.appendMarkdown(
                    'Coherence runs the functions in this folder, and alternatives to them, so it is off in ' +
                        'Restricted Mode. Trust the folder to check it (click).',
                );
                this.item.tooltip = tooltip;
                return;
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
                this.item.text = runningText(this.counts);
                tooltip.appendMarkdown(
                    `**Coherence**\n\n` +
                        `- checking: ${checking}\n` +
                        `- warning: ${warning}\n` +
                        `- information: ${information}\n` +
                        `- hint: ${hint}\n` +
                        `- coherent: ${coherent}\n` +
                        `- skipped: ${skipped}\n` +
                        `- could not be checked: ${this.counts.errors}\n` +
                        `- latest check failed (earlier result shown): ${this.counts.failed}\n` +
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
