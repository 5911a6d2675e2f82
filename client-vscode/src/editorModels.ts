// The editor's own chat models as the source of samples (`coherence.model` = "editor" or
// "editor/<family>"): the server asks with `coherence/sample` and this answers through VS Code's
// Language Model API, with the user's consent and quota. The server sends the prompt it would send
// through litellm (the function's signature, docstring and module context, never its body); this
// only relays it and the replies. The API is looked up at run time: the extension supports VS Code
// 1.85, and `vscode.lm` came in 1.90, so an older editor answers "unsupported" and the server says so.
import * as vscode from 'vscode';
import { CONFIG_SECTION } from './common/constants';
import { traceInfo, traceWarn } from './common/log';

/** Server -> client request; the server learns this client answers it from `initializationOptions.sampleRequest`. */
export const SAMPLE_REQUEST = 'coherence/sample';
export const EDITOR_MODEL = 'editor';
/** Requests in flight to the model for one function's samples. */
const CONCURRENCY = 3;
const JUSTIFICATION =
    'Coherence asks for independent implementations of the function you are checking, to compare their behaviour with yours.';

/** What the server knows of a failure (engine/sampling/editor.py ERROR_KINDS). */
export type ErrorKind = 'cancelled' | 'rate_limit' | 'no_permission' | 'no_model' | 'unsupported' | 'timeout' | 'other';

export interface SampleReply {
    texts: string[];
    model?: string;
    error?: { kind: ErrorKind; message: string };
}

interface SampleParams {
    messages: { role: string; content: string }[];
    n: number;
    temperature: number;
    family?: string;
    function?: string;
}

// The parts of the Language Model API used here (VS Code 1.90+), typed locally: @types/vscode is 1.85's.
interface ChatMessage {
    readonly role: number;
}
interface ChatResponse {
    readonly text: AsyncIterable<string>;
}
interface ChatModel {
    readonly id: string;
    readonly name: string;
    readonly vendor: string;
    readonly family: string;
    sendRequest(
        messages: ChatMessage[],
        options: { justification?: string; modelOptions?: Record<string, unknown> },
        token: vscode.CancellationToken,
    ): Thenable<ChatResponse>;
}
interface LmApi {
    selectChatModels(selector?: { family?: string }): Thenable<ChatModel[]>;
}
interface LmNamespace {
    lm?: LmApi;
    LanguageModelChatMessage?: { User(content: string): ChatMessage; Assistant(content: string): ChatMessage };
}

function lmApi(): (Required<LmNamespace> & { lm: LmApi }) | undefined {
    const ns = vscode as unknown as LmNamespace;
    return typeof ns.lm?.selectChatModels === 'function' && ns.LanguageModelChatMessage
        ? (ns as Required<LmNamespace>)
        : undefined;
}

export function isEditorModel(model: unknown): boolean {
    return typeof model === 'string' && (model.trim() === EDITOR_MODEL || /^editor\/\S/.test(model.trim()));
}

/** The chat models the editor offers (none without the API, or when asking fails). */
export async function editorChatModels(): Promise<ChatModel[]> {
    const api = lmApi();
    if (!api) {
        return [];
    }
    try {
        return [...(await api.lm.selectChatModels())];
    } catch (error) {
        traceWarn('Listing the editor chat models failed:', error);
        return [];
    }
}

function parseParams(params: unknown): SampleParams | string {
    const p = (params ?? {}) as Partial<SampleParams>;
    if (!Array.isArray(p.messages) || !p.messages.every((m) => typeof m?.content === 'string')) {
        return 'no messages';
    }
    if (typeof p.n !== 'number' || !Number.isInteger(p.n) || p.n < 1 || p.n > 100) {
        return `not a number of samples: ${JSON.stringify(p.n)}`;
    }
    return {
        messages: p.messages,
        n: p.n,
        temperature: typeof p.temperature === 'number' ? p.temperature : 0.6,
        family: typeof p.family === 'string' && p.family ? p.family : undefined,
        function: typeof p.function === 'string' ? p.function : undefined,
    };
}

/** A failure of `sendRequest` as the server names it (LanguageModelError codes, cancellation). */
export function errorKind(error: unknown): ErrorKind {
    const code = (error as { code?: unknown } | null)?.code;
    const name = (error as { name?: unknown } | null)?.name;
    if (error instanceof vscode.CancellationError || name === 'Canceled') {
        return 'cancelled';
    }
    if (code === 'NoPermissions') {
        return 'no_permission';
    }
    if (code === 'Blocked') {
        return 'rate_limit'; // the requester is blocked for now: VS Code's word for a quota or rate limit
    }
    if (code === 'NotFound') {
        return 'no_model';
    }
    return 'other';
}

function message(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

/** Answers `coherence/sample`: `n` replies of one chat model to the server's prompt. */
export async function answerSample(params: unknown, token: vscode.CancellationToken): Promise<SampleReply> {
    const api = lmApi();
    if (!api) {
        return {
            texts: [],
            error: { kind: 'unsupported', message: `VS Code ${vscode.version} has no vscode.lm (1.90 or later has)` },
        };
    }
    const p = parseParams(params);
    if (typeof p === 'string') {
        return { texts: [], error: { kind: 'other', message: `a malformed ${SAMPLE_REQUEST}: ${p}` } };
    }
    let models: ChatModel[];
    try {
        models = [...(await api.lm.selectChatModels(p.family ? { family: p.family } : {}))];
    } catch (error) {
        return { texts: [], error: { kind: errorKind(error), message: message(error) } };
    }
    const model = models[0];
    if (!model) {
        const offered = [...new Set((await editorChatModels()).map((m) => m.family))].join(', ');
        return {
            texts: [],
            error: {
                kind: 'no_model',
                message: offered ? `the editor offers: ${offered}` : 'the editor offers no chat model',
            },
        };
    }
    // vscode.lm has no system role: the system prompt goes first, as a user message
    const messages = p.messages.map((m) =>
        m.role === 'assistant'
            ? api.LanguageModelChatMessage.Assistant(m.content)
            : api.LanguageModelChatMessage.User(m.content),
    );
    const texts: string[] = [];
    let failure: SampleReply['error'];
    let next = 0;
    const worker = async (): Promise<void> => {
        while (next < p.n && failure === undefined) {
            next += 1;
            if (token.isCancellationRequested) {
                failure = { kind: 'cancelled', message: 'the server cancelled the request' };
                return;
            }
            try {
                const response = await model.sendRequest(
                    messages,
                    { justification: JUSTIFICATION, modelOptions: { temperature: p.temperature } },
                    token,
                );
                let text = '';
                for await (const part of response.text) {
                    text += part;
                }
                texts.push(text);
            } catch (error) {
                failure ??= { kind: errorKind(error), message: message(error) };
            }
        }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, p.n) }, worker));
    const who = `${model.vendor}/${model.family || model.id}`;
    traceInfo(
        `${SAMPLE_REQUEST}: ${texts.length} of ${p.n} replies from ${who} for ${p.function ?? 'a function'}` +
            (failure ? ` (${failure.kind}: ${failure.message})` : ''),
    );
    return { texts, model: who, ...(failure && texts.length < p.n ? { error: failure } : {}) };
}

/** The "no model" message's offer: set coherence.model to "editor" in the user settings. */
export async function useEditorModel(): Promise<void> {
    await vscode.workspace.getConfiguration(CONFIG_SECTION).update('model', EDITOR_MODEL, vscode.ConfigurationTarget.Global);
    traceInfo('coherence.model set to "editor" in the user settings: samples come from the editor chat models.');
}
