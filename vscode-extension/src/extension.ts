// A thin client: it starts the aoti-lsp server and forwards settings.
// Diagnostics, quick fixes, hover and "fix all" all come from the server.
import * as vscode from 'vscode';
// Types only: vscode-languageclient's modules are set up (~40 ms) once the server is spawned,
// while its imports run, not before the spawn (startServer).
import type { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { explainCrashLog } from './explain';
import { pythonExtensionApi, ServerNotFound, spawnServer, StartedServer, startServerProcess } from './server';

const ID = 'aoti-lsp';
const SOURCE = 'aoti-lsp';
const FIX_ALL_KIND = vscode.CodeActionKind.SourceFixAll.append(ID);

let client: LanguageClient | undefined;
let serverProcess: StartedServer['process'] | undefined;
let log: vscode.LogOutputChannel;
let traceChannel: vscode.LogOutputChannel;
const traceLevelChanged = new vscode.EventEmitter<vscode.LogLevel>();
let status: vscode.StatusBarItem;
let serverState = 'stopped';
let lastError: string | undefined;
let starting: Promise<void> | undefined;

/**
 * vscode-languageclient writes the LSP trace only when its channel's log level is Trace, which an
 * extension cannot set; this plain channel reports Trace while `aoti-lsp.trace.server` is on.
 */
function traceChannelFor(channel: vscode.OutputChannel): vscode.LogOutputChannel {
    const level = () =>
        vscode.workspace.getConfiguration(ID).get<string>('trace.server', 'off') === 'off' ? vscode.LogLevel.Info : vscode.LogLevel.Trace;
    const write = (message: string | Error) => channel.appendLine(`[${new Date().toISOString()}] ${message}`);
    return {
        name: channel.name,
        get logLevel() {
            return level();
        },
        onDidChangeLogLevel: traceLevelChanged.event,
        trace: write,
        debug: write,
        info: write,
        warn: write,
        error: write,
        append: (value: string) => channel.append(value),
        appendLine: (value: string) => channel.appendLine(value),
        replace: (value: string) => channel.replace(value),
        clear: () => channel.clear(),
        show: (a?: boolean | vscode.ViewColumn, b?: boolean) => channel.show(a as vscode.ViewColumn, b),
        hide: () => channel.hide(),
        dispose: () => channel.dispose(),
    } as vscode.LogOutputChannel;
}

/** The settings the server reads, in the contract's shape. */
function serverSettings(): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration(ID);
    return {
        select: config.get<string[]>('select', []),
        ignore: config.get<string[]>('ignore', []),
        run: config.get<string>('run', 'onType'),
    };
}

function findingCount(): number {
    let count = 0;
    for (const [, diagnostics] of vscode.languages.getDiagnostics()) {
        count += diagnostics.filter((d) => d.source === SOURCE).length;
    }
    return count;
}

function updateStatus(): void {
    const count = findingCount();
    const icon = { running: '$(check)', starting: '$(sync~spin)', stopped: '$(circle-slash)', failed: '$(error)' }[serverState] ?? '';
    status.text = `${icon} aoti-lsp${serverState === 'running' ? `: ${count}` : ''}`;
    status.tooltip =
        serverState === 'failed'
            ? `aoti-lsp could not start: ${lastError ?? ''}\nClick to show the output.`
            : `aoti-lsp server: ${serverState}. ${count} finding${count === 1 ? '' : 's'} in open files.\nClick to show the output.`;
    status.backgroundColor = serverState === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    status.show();
}

function setState(state: string): void {
    serverState = state;
    updateStatus();
}

function reportStartFailure(message: string, fix: string): void {
    lastError = message;
    log.error(`${message} ${fix}`);
    setState('failed');
    // Not awaited: activation must not wait for a click.
    void vscode.window.showErrorMessage(`${message} ${fix}`, 'Open settings', 'Show output').then((choice) => {
        if (choice === 'Open settings') {
            void vscode.commands.executeCommand('workbench.action.openSettings', '@ext:aoti-lsp.aoti-lsp');
        } else if (choice === 'Show output') {
            log.show();
        }
    });
}

async function startServer(context: vscode.ExtensionContext): Promise<void> {
    if (!vscode.workspace.getConfiguration(ID).get<boolean>('enable', true)) {
        log.info('aoti-lsp.enable is false: not starting the server.');
        setState('stopped');
        return;
    }
    setState('starting');
    let server: StartedServer;
    let lc: typeof import('vscode-languageclient/node');
    try {
        const started = startServerProcess(context.extensionPath, pythonExtensionApi, log); // spawns, then awaits its probe
        started.catch(() => undefined); // awaited below, after the client's modules load
        lc = await import('vscode-languageclient/node');
        server = await started;
    } catch (error) {
        if (error instanceof ServerNotFound) {
            reportStartFailure(error.message, error.fix);
            return;
        }
        throw error;
    }
    log.info(`Starting aoti-lsp ${server.version} (${server.origin}): ${server.command} ${[...server.args, 'serve'].join(' ')} at ${new Date().toISOString()}`);

    // The process already runs (started beside its version probe, or the bundled server's without
    // one); a restart after a crash spawns the same command again.
    let first: StartedServer['process'] | undefined = server.process;
    const serverOptions: ServerOptions = async () => {
        const child = first ?? spawnServer(server);
        first = undefined;
        serverProcess = child;
        return child;
    };
    const clientOptions: LanguageClientOptions = {
        documentSelector: [
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
            // a notebook's Python cells (as ruff-vscode selects them): the server gets them as
            // notebookDocument/* and checks the code cells as one program
            { scheme: 'vscode-notebook', language: 'python' },
            { scheme: 'vscode-notebook-cell', language: 'python' },
        ],
        initializationOptions: { settings: serverSettings() },
        outputChannel: log,
        // vscode-languageclient traces only into a channel at log level Trace: see traceChannelFor.
        traceOutputChannel: traceChannel,
        revealOutputChannelOn: lc.RevealOutputChannelOn.Never,
    };
    const newClient = new lc.LanguageClient(ID, 'aoti-lsp', serverOptions, clientOptions);
    newClient.onDidChangeState((event) => {
        if (client !== newClient) {
            return; // a client being replaced by a restart
        }
        setState(event.newState === lc.State.Running ? 'running' : event.newState === lc.State.Starting ? 'starting' : 'stopped');
    });
    client = newClient;
    try {
        const asked = Date.now();
        await newClient.start();
        const info = newClient.initializeResult?.serverInfo;
        log.info(`initialize answered in ${Date.now() - asked} ms: ${info?.name ?? 'a server'} ${info?.version ?? '(no version)'}`);
        if (info?.version && info.version !== server.version) {
            log.warn(`the server reports ${info.version}, ${server.versionFrom} said ${server.version}`);
        }
        lastError = undefined;
        setState('running');
    } catch (error) {
        client = undefined;
        stopProcess();
        reportStartFailure(
            `aoti-lsp ${server.version} (${server.command}) failed to start: ${error instanceof Error ? error.message : String(error)}.`,
            'See the aoti-lsp output for the server\'s error; reinstall with `pip install --upgrade aoti-lsp` or choose another interpreter.',
        );
    }
}

/** The client stops the server with shutdown and exit; a process we spawned that has not
 * exited 2 s later (or that no client talked to) is killed. */
function stopProcess(): void {
    const old = serverProcess;
    serverProcess = undefined;
    if (old) {
        setTimeout(() => {
            if (old.exitCode === null && old.signalCode === null) {
                old.kill();
            }
        }, 2000);
    }
}

async function stopServer(): Promise<void> {
    const old = client;
    client = undefined;
    if (old) {
        try {
            await old.stop();
        } catch (error) {
            log.warn(`Stopping the server: ${error}`);
        }
    }
    stopProcess();
    setState('stopped');
}

async function restart(context: vscode.ExtensionContext): Promise<void> {
    // Serialise restarts: settings changes can arrive in bursts.
    const previous = starting;
    starting = (async () => {
        await previous;
        await stopServer();
        await startServer(context);
    })();
    return starting;
}

async function fixAll(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'python') {
        return;
    }
    const document = editor.document;
    const range = new vscode.Range(0, 0, document.lineCount, 0);
    const actions =
        (await vscode.commands.executeCommand<vscode.CodeAction[]>(
            'vscode.executeCodeActionProvider',
            document.uri,
            range,
            FIX_ALL_KIND.value,
            10, // resolve the actions: the server builds fix-all edits in codeAction/resolve
        )) ?? [];
    const action = actions.find((a) => a.kind && FIX_ALL_KIND.contains(a.kind));
    if (!action || (!action.edit && !action.command)) {
        void vscode.window.showInformationMessage('aoti-lsp: nothing to fix automatically in this file.');
        return;
    }
    if (action.edit) {
        await vscode.workspace.applyEdit(action.edit);
    }
    if (action.command) {
        await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
    }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    log = vscode.window.createOutputChannel('aoti-lsp', { log: true });
    // the output channel stamps lines when it writes them (in batches): this clock is exact
    log.info(`activated at ${new Date().toISOString()}`);
    traceChannel = traceChannelFor(vscode.window.createOutputChannel('aoti-lsp (trace)'));
    status = vscode.window.createStatusBarItem(`${ID}.status`, vscode.StatusBarAlignment.Right, 100);
    status.name = 'aoti-lsp';
    status.command = `${ID}.showOutput`;
    context.subscriptions.push(log, traceChannel, traceLevelChanged, status);

    context.subscriptions.push(
        vscode.commands.registerCommand(`${ID}.restart`, () => restart(context)),
        vscode.commands.registerCommand(`${ID}.showOutput`, () => log.show()),
        vscode.commands.registerCommand(`${ID}.fixAll`, fixAll),
        vscode.commands.registerCommand(`${ID}.explainCrashLog`, () => explainCrashLog(client)),
        vscode.languages.onDidChangeDiagnostics(() => updateStatus()),
        vscode.workspace.onDidChangeConfiguration(async (event) => {
            if (event.affectsConfiguration(`${ID}.trace.server`)) {
                traceLevelChanged.fire(traceChannel.logLevel);
            }
            if (['enable', 'path', 'interpreter'].some((key) => event.affectsConfiguration(`${ID}.${key}`))) {
                await restart(context);
            } else if (['select', 'ignore', 'run'].some((key) => event.affectsConfiguration(`${ID}.${key}`))) {
                const { DidChangeConfigurationNotification } = await import('vscode-languageclient/node');
                await client?.sendNotification(DidChangeConfigurationNotification.type, {
                    settings: { [ID]: serverSettings() },
                });
            }
        }),
    );

    // The Python extension is activated beside the server's start, not before it: its
    // interpreter is asked only where no aoti-lsp setting names one (server.ts).
    const started = restart(context);
    void pythonExtensionApi().then((api) => {
        if (api) {
            context.subscriptions.push(
                api.environments.onDidChangeActiveEnvironmentPath(() => {
                    const config = vscode.workspace.getConfiguration(ID);
                    if (!config.get<string>('path') && !config.get<string>('interpreter')) {
                        void restart(context);
                    }
                }),
            );
        }
    });
    await started;
}

export async function deactivate(): Promise<void> {
    await stopServer();
}
