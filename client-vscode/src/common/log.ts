// Logging to the "Coherence" output channel (a LogOutputChannel, whose level the user picks
// with "Developer: Set Log Level..."). The language client writes the server's stderr and the
// LSP trace to the same channel.
import { Disposable, LogOutputChannel, window } from 'vscode';
import { SERVER_NAME } from './constants';

let channel: LogOutputChannel | undefined;

export function createOutputChannel(): LogOutputChannel {
    channel = window.createOutputChannel(SERVER_NAME, { log: true });
    return channel;
}

export function getOutputChannel(): LogOutputChannel | undefined {
    return channel;
}

export function disposeOutputChannel(): Disposable {
    return new Disposable(() => {
        channel?.dispose();
        channel = undefined;
    });
}

function format(parts: unknown[]): string {
    return parts
        .map((part) => {
            if (part instanceof Error) {
                return part.stack ?? `${part.name}: ${part.message}`;
            }
            if (typeof part === 'string') {
                return part;
            }
            try {
                return JSON.stringify(part);
            } catch {
                return String(part);
            }
        })
        .join(' ');
}

export function traceError(...parts: unknown[]): void {
    channel?.error(format(parts));
}

export function traceWarn(...parts: unknown[]): void {
    channel?.warn(format(parts));
}

export function traceInfo(...parts: unknown[]): void {
    channel?.info(format(parts));
}

export function traceVerbose(...parts: unknown[]): void {
    channel?.debug(format(parts));
}
