// Smoke test: drive `python -m coherence serve` through vscode-jsonrpc, the library VS Code's
// language client reads stdio with.  Every byte the server writes to stdout is also checked by a
// strict framing parser: anything that is not a `Content-Length` framed JSON-RPC 2.0 message
// (a stray print, a warning) fails the run.
//
// usage: node smoke.mjs <python> <workspace folder>     (exit code 0 = pass)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';

const [python, workspace] = process.argv.slice(2);
if (!python || !workspace) {
    console.error('usage: node smoke.mjs <python> <workspace>');
    process.exit(2);
}
const TIMEOUT_MS = Number(process.env.SMOKE_TIMEOUT_MS || 60000);
const log = (...args) => console.error('[smoke]', ...args);
const fail = (message) => {
    console.error(`[smoke] FAIL: ${message}`);
    try {
        server.kill('SIGKILL');
    } catch {}
    process.exit(1);
};
setTimeout(() => fail(`timed out after ${TIMEOUT_MS} ms`), TIMEOUT_MS).unref();

const server = spawn(python, ['-m', 'coherence', 'serve'], {
    cwd: workspace,
    env: { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True' },
    stdio: ['pipe', 'pipe', 'pipe'],
});
server.on('error', (err) => fail(`cannot start the server: ${err}`));
server.stderr.on('data', (chunk) => process.stderr.write(chunk));

// Strict framing check of the raw stream, in parallel with vscode-jsonrpc's reader.
let raw = Buffer.alloc(0);
let framed = 0;
server.stdout.on('data', (chunk) => {
    raw = Buffer.concat([raw, chunk]);
    for (;;) {
        const end = raw.indexOf('\r\n\r\n');
        if (end < 0) {
            const head = raw.subarray(0, 8).toString('latin1');
            if (!'Content-'.startsWith(head)) {
                fail(`non-JSON-RPC bytes on stdout: ${JSON.stringify(raw.subarray(0, 80).toString('latin1'))}`);
            }
            return;
        }
        const headers = raw.subarray(0, end).toString('ascii').split('\r\n');
        let length = -1;
        for (const h of headers) {
            const m = /^Content-Length: (\d+)$/.exec(h);
            if (m) length = Number(m[1]);
            else if (!/^Content-Type: /.test(h)) fail(`unexpected header line on stdout: ${JSON.stringify(h)}`);
        }
        if (length < 0) fail(`a message without Content-Length: ${JSON.stringify(headers)}`);
        if (raw.length < end + 4 + length) return;
        const body = raw.subarray(end + 4, end + 4 + length).toString('utf8');
        let msg;
        try {
            msg = JSON.parse(body);
        } catch (err) {
            fail(`a body that is not JSON: ${JSON.stringify(body.slice(0, 200))}`);
        }
        if (msg.jsonrpc !== '2.0') fail(`not JSON-RPC 2.0: ${body.slice(0, 200)}`);
        framed += 1;
        raw = raw.subarray(end + 4 + length);
    }
});

const connection = createMessageConnection(new StreamMessageReader(server.stdout), new StreamMessageWriter(server.stdin));
connection.onError(([err]) => fail(`vscode-jsonrpc error: ${err && err.message}`));
// Requests the server makes of its client.
connection.onRequest('window/workDoneProgress/create', () => null);
connection.onRequest('client/registerCapability', () => null);
connection.onRequest('workspace/codeLens/refresh', () => null);
connection.onRequest('workspace/configuration', (params) => params.items.map(() => null));

const statuses = [];
const progress = [];
const messages = [];
let onDiagnostics = () => {};
connection.onNotification('coherence/status', (p) => statuses.push(p));
connection.onNotification('$/progress', (p) => progress.push(p));
connection.onNotification('window/showMessage', (p) => messages.push(p));
connection.onNotification('window/logMessage', () => {});
connection.onNotification('textDocument/publishDiagnostics', (p) => onDiagnostics(p));
connection.listen();

const rootUri = pathToFileURL(workspace).href;
const uri = pathToFileURL(join(workspace, 'textutils.py')).href;
const text = readFileSync(join(workspace, 'textutils.py'), 'utf8');

const init = await connection.sendRequest('initialize', {
    processId: process.pid,
    clientInfo: { name: 'vscode-jsonrpc smoke test', version: '1' },
    rootUri,
    workspaceFolders: [{ uri: rootUri, name: 'examples' }],
    capabilities: {
        window: { workDoneProgress: true },
        workspace: { configuration: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } },
        textDocument: { hover: { contentFormat: ['markdown', 'plaintext'] }, publishDiagnostics: {}, synchronization: { didSave: true } },
    },
    initializationOptions: { settings: { inputs: 200, runOn: 'open' } },
});
const caps = init.capabilities;
for (const need of ['hoverProvider', 'codeActionProvider', 'codeLensProvider', 'executeCommandProvider']) {
    if (!caps[need]) fail(`the server does not advertise ${need}`);
}
const commands = caps.executeCommandProvider.commands;
for (const c of ['coherence.checkFunction', 'coherence.checkFile', 'coherence.checkWorkspace', 'coherence.clearCache', 'coherence.showLastResult']) {
    if (!commands.includes(c)) fail(`command ${c} is not advertised`);
}
log(`initialized: ${init.serverInfo.name} ${init.serverInfo.version}`);
await connection.sendNotification('initialized', {});

const diagnostic = new Promise((resolve) => {
    onDiagnostics = (p) => {
        const found = p.uri === uri && p.diagnostics.find((d) => d.source === 'coherence' && d.code === 'incoherent');
        if (found) resolve(found);
    };
});
await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
const d = await diagnostic;
log(`diagnostic: ${d.message}`);
if (!/\d of \d alternatives disagree with yours on count_vowels\(.*\): yours 0, theirs 1 \(trust \d\.\d\d\)/.test(d.message)) fail(`unexpected message: ${d.message}`);
if (d.severity !== 2) fail(`expected a Warning (2), the verdict's severity, got ${d.severity}`);

const line = text.split('\n').findIndex((l) => l.startsWith('def count_vowels'));
const hover = await connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line, character: 6 } });
if (!hover || !hover.contents.value.includes('counterexample: `count_vowels(')) fail(`unexpected hover: ${JSON.stringify(hover)}`);
const last = await connection.sendRequest('workspace/executeCommand', { command: 'coherence.showLastResult', arguments: [uri, line] });
if (!last || last.status !== 'incoherent') fail(`unexpected showLastResult: ${JSON.stringify(last)}`);
if (!statuses.some((s) => s.incoherent === 1)) fail(`no coherence/status with the count: ${JSON.stringify(statuses)}`);
if (!progress.some((p) => p.value && p.value.kind === 'end')) log('note: progress had not ended yet');

await connection.sendRequest('shutdown');
const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
await connection.sendNotification('exit');
const { code, signal } = await exited;
if (code !== 0) fail(`the server exited with ${code} (signal ${signal})`);
// Let the framing parser see the last bytes.
await new Promise((r) => setTimeout(r, 50));
if (raw.length !== 0) fail(`trailing bytes on stdout: ${JSON.stringify(raw.toString('latin1').slice(0, 80))}`);
log(`PASS: ${framed} framed messages, no stray bytes, exit code 0`);
connection.dispose();
process.exit(0);
