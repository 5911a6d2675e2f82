// "Show alternatives": the server's coherence.showAlternatives payload shown as VS Code diffs of
// your function against each other behaviour cluster's representative, with each side's output on
// the counterexample and its cluster size above it. Next/previous step through the clusters.
import { Disposable, EventEmitter, TextDocumentContentProvider, Uri, commands, window, workspace } from 'vscode';
import { ClientCommands } from './common/constants';

export const ALTERNATIVES_SCHEME = 'coherence-alternatives';
/** Context key: the number of clusters in the diff on show (the title bar's next/previous buttons). */
const CONTEXT_ALTERNATIVES = 'coherence.alternatives';

interface Side {
    source: string;
    output: string | null;
    size: number;
    /** e.g. `alternative 1 of 2: 9 of 10 programs (gpt-4o-mini ×9)` */
    label: string;
    /** e.g. `count_vowels('A') -> 1`, or '' without a counterexample */
    shown: string;
}

export interface AlternativesPayload {
    name: string;
    qualname: string;
    call: string | null;
    programs: number;
    yours: Side;
    clusters: Side[];
}

function isPayload(value: unknown): value is AlternativesPayload {
    const p = value as AlternativesPayload | null;
    return !!p && typeof p.qualname === 'string' && !!p.yours && Array.isArray(p.clusters) && p.clusters.length > 0;
}

function text(side: Side): string {
    const header = [`# ${side.label}`, ...(side.shown ? [`#   ${side.shown}`] : [])];
    return `${header.join('\n')}\n\n${side.source}`;
}

class AlternativesView implements TextDocumentContentProvider, Disposable {
    private payload: AlternativesPayload | undefined;
    private at = 0;
    // Each payload gets new URIs, so VS Code never shows a stale document from an earlier one.
    private generation = 0;
    private readonly changed = new EventEmitter<Uri>();
    readonly onDidChange = this.changed.event;

    provideTextDocumentContent(uri: Uri): string {
        const [generation, side] = uri.path.split('/').slice(1, 3);
        const p = this.payload;
        if (!p || Number(generation) !== this.generation) {
            return '# coherence: this comparison is out of date; run "Show alternatives" again.\n';
        }
        const cluster = side === 'yours' ? p.yours : p.clusters[Number(side)];
        return cluster ? text(cluster) : '';
    }

    async show(payload: AlternativesPayload): Promise<void> {
        this.payload = payload;
        this.generation += 1;
        this.at = 0;
        await commands.executeCommand('setContext', CONTEXT_ALTERNATIVES, payload.clusters.length);
        await this.open();
    }

    async step(delta: number): Promise<void> {
        const p = this.payload;
        if (!p) {
            void window.showInformationMessage('Coherence: run "Show alternatives" on a checked function first.');
            return;
        }
        this.at = (this.at + delta + p.clusters.length) % p.clusters.length;
        await this.open();
    }

    private uri(side: string): Uri {
        const file = `${this.payload?.name ?? 'function'}.py`;
        return Uri.from({ scheme: ALTERNATIVES_SCHEME, path: `/${this.generation}/${side}/${file}` });
    }

    private async open(): Promise<void> {
        const p = this.payload;
        if (!p) {
            return;
        }
        const other = p.clusters[this.at];
        const output = (side: Side) => (side.output === null ? '' : ` (${side.output})`);
        const title =
            `${p.name}: yours${output(p.yours)} ↔ alternative ${this.at + 1} of ${p.clusters.length}, ` +
            `${other.size} of ${p.programs}${output(other)}`;
        await commands.executeCommand('vscode.diff', this.uri('yours'), this.uri(String(this.at)), title, {
            preview: true,
        });
    }

    dispose(): void {
        this.changed.dispose();
        this.payload = undefined;
    }
}

let view: AlternativesView | undefined;

/** The content provider and the next/previous commands; call once from activate(). */
export function registerAlternatives(subscriptions: Disposable[]): void {
    view = new AlternativesView();
    subscriptions.push(
        view,
        workspace.registerTextDocumentContentProvider(ALTERNATIVES_SCHEME, view),
        commands.registerCommand(ClientCommands.nextAlternative, () => view?.step(1)),
        commands.registerCommand(ClientCommands.previousAlternative, () => view?.step(-1)),
    );
}

/**
 * Runs the server's coherence.showAlternatives asking for the data only (`{view: "client"}`: the
 * server would otherwise open a unified diff document) and shows it in the diff view.
 */
export async function showAlternatives(args: unknown[], next: (args: unknown[]) => Promise<unknown>): Promise<unknown> {
    const payload = await next([args[0], args[1], { view: 'client' }]);
    if (isPayload(payload) && view) {
        await view.show(payload);
    }
    return payload;
}
