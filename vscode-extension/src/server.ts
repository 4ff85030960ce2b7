// Finding and starting the server process. No linting logic lives here.
//
// Order: `aoti-lsp.path` > `aoti-lsp.interpreter` > the Python extension's
// active interpreter > the bundled server (`bundled/libs`, platform builds) >
// `python3` on PATH.
//
// Each candidate's server is spawned at once and its `--version` probe runs beside it: the
// server's imports (most of its start) do not wait for the probe. A candidate whose probe fails
// is killed and the next one tried (issue 23 item 5: the first squiggle within 1.5 s). The
// bundled server starts beside the environment's, for the same reason; it has no probe (its
// version is the one bundled/libs was built with: while VS Code starts, on 2 cores, every extra
// Python process delays the server's imports), and the check that the interpreter fits the
// bundle runs without site-packages (-S).
import { ChildProcess, execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

/** The oldest server this extension speaks to (settings shape, code action titles). */
export const MIN_SERVER_VERSION = '0.1.0';

export interface ServerCommand {
    command: string;
    /** The arguments before `serve` (or `--version`). */
    args: string[];
    env?: NodeJS.ProcessEnv;
    /** Where the command came from, for the output channel and error messages. */
    origin: string;
}

/** A server process that is running, and its version. */
export interface StartedServer extends ServerCommand {
    process: ChildProcess;
    version: string;
    /** Where `version` comes from, for the output channel. */
    versionFrom: string;
}

/** Why no server could be started, with the fix a person can apply. */
export class ServerNotFound extends Error {
    constructor(message: string, public readonly fix: string) {
        super(message);
    }
}

interface ProbeResult {
    ok: boolean;
    version?: string;
    detail: string;
}

function run(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number | string; out: string }> {
    return new Promise((resolve) => {
        execFile(command, args, { timeout: 30_000, env: env ?? process.env }, (error, stdout, stderr) => {
            const out = `${stdout}${stderr}`.trim();
            if (!error) {
                resolve({ code: 0, out });
            } else {
                const code = (error as NodeJS.ErrnoException).code ?? 1;
                resolve({ code: typeof code === 'number' || typeof code === 'string' ? code : 1, out: out || error.message });
            }
        });
    });
}

function compareVersions(a: string, b: string): number {
    const pa = a.split(/[.+-]/).map((p) => parseInt(p, 10) || 0);
    const pb = b.split(/[.+-]/).map((p) => parseInt(p, 10) || 0);
    for (let i = 0; i < 3; i++) {
        if ((pa[i] ?? 0) !== (pb[i] ?? 0)) {
            return (pa[i] ?? 0) - (pb[i] ?? 0);
        }
    }
    return 0;
}

/** Runs `<command> <args> --version`, expects `aoti-lsp X.Y.Z`. */
async function probe(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<ProbeResult> {
    const { code, out } = await run(command, [...args, '--version'], env);
    if (code === 'ENOENT') {
        return { ok: false, detail: `${command} was not found` };
    }
    const match = /aoti-lsp (\d+\.\d+\.\d+\S*)/.exec(out);
    if (code !== 0 || !match) {
        const last = out.split('\n').filter((l) => l.trim()).pop() ?? `exit code ${code}`;
        return { ok: false, detail: last };
    }
    if (compareVersions(match[1], MIN_SERVER_VERSION) < 0) {
        return { ok: false, version: match[1], detail: `aoti-lsp ${match[1]} is too old (this extension needs >= ${MIN_SERVER_VERSION})` };
    }
    return { ok: true, version: match[1], detail: out };
}

/** The public API of ms-python.python that we use (environments.getActiveEnvironmentPath). */
interface PythonExtensionApi {
    environments: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
        resolveEnvironment(env: { id: string; path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
}

export async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
    const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
    if (!ext) {
        return undefined;
    }
    try {
        const api = ext.isActive ? ext.exports : await ext.activate();
        return api?.environments ? api : undefined;
    } catch {
        return undefined;
    }
}

async function activeInterpreter(api: PythonExtensionApi | undefined, resource?: vscode.Uri): Promise<string | undefined> {
    if (!api) {
        return undefined;
    }
    try {
        const envPath = api.environments.getActiveEnvironmentPath(resource);
        const env = await api.environments.resolveEnvironment(envPath);
        return env?.executable.uri?.fsPath;
    } catch {
        return undefined;
    }
}

/** `bundled/libs` is built for CPython 3.11 on linux-x64 only: undefined where `python` fits it,
 * else what it is (for the output channel). */
async function misfitsBundle(python: string): Promise<string | undefined> {
    const { code, out } = await run(python, [
        '-S', // what it is does not need site-packages (nor their .pth files' time)
        '-c',
        'import sys, os; print(sys.implementation.name, "%d.%d" % sys.version_info[:2], sys.platform, os.uname().machine)',
    ]);
    const found = out.trim();
    if (code === 0 && found === 'cpython 3.11 linux x86_64') {
        return undefined;
    }
    return code === 0 ? `${python} is ${found}, the bundled server needs CPython 3.11 on linux x86_64` : `${python} did not run: ${found}`;
}

/** The version of the server in `libs` from its dist-info folder (`aoti_lsp-X.Y.Z.dist-info`, as
 * pip installed it there when the .vsix was built), read without running it; undefined where
 * `libs` holds no server. */
export function bundledVersion(libs: string): string | undefined {
    let names: string[];
    try {
        if (!fs.statSync(path.join(libs, 'aoti_lsp')).isDirectory()) {
            return undefined;
        }
        names = fs.readdirSync(libs);
    } catch {
        return undefined;
    }
    for (const name of names) {
        const match = /^aoti_lsp-(\d+\.\d+\.\d+\S*)\.dist-info$/.exec(name);
        if (match) {
            return match[1];
        }
    }
    return undefined;
}

function resolveVariables(value: string): string {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    return value
        .replace(/\$\{workspaceFolder\}/g, folder)
        .replace(/^~(?=$|\/)/, process.env.HOME ?? '~');
}

/** The first workspace folder, the server's working directory (as vscode-languageclient chose it). */
function workingDir(): string | undefined {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    try {
        return folder && fs.statSync(folder).isDirectory() ? folder : undefined;
    } catch {
        return undefined;
    }
}

/** Spawns `<command> <args> serve` (stdio); the caller owns the process. */
export function spawnServer(server: ServerCommand): ChildProcess {
    const child = spawn(server.command, [...server.args, 'serve'], { cwd: workingDir(), env: server.env ?? process.env, stdio: 'pipe' });
    child.on('error', () => undefined); // ENOENT and the like: the probe beside it says why
    return child;
}

interface Launch {
    child: ChildProcess;
    /** The running server once its probe says it fits; else the probe's failure (and the process killed). */
    result: Promise<StartedServer | ProbeResult>;
}

/** Starts the server and checks its version beside it; kills it where the check fails. */
function launch(server: ServerCommand, log: vscode.LogOutputChannel): Launch {
    const child = spawnServer(server);
    const spawned = Date.now();
    const line = `${server.command} ${[...server.args, 'serve'].join(' ')}`;
    log.info(`${server.origin}: spawned ${line} (pid ${child.pid ?? 'none'}); its --version probe runs beside it`);
    const result = probe(server.command, server.args, server.env).then((found): StartedServer | ProbeResult => {
        log.info(`${server.origin}: ${server.command} ${[...server.args, '--version'].join(' ')} -> ${found.detail} (${Date.now() - spawned} ms after the spawn)`);
        if (!found.ok) {
            child.kill();
            return found;
        }
        return { ...server, process: child, version: found.version!, versionFrom: 'its --version' };
    });
    return { child, result };
}

function isStarted(value: StartedServer | ProbeResult): value is StartedServer {
    return 'process' in value;
}

/** Finds the server, starts it, and returns it running (or throws ServerNotFound). */
export async function startServerProcess(
    extensionPath: string,
    pythonApi: () => Promise<PythonExtensionApi | undefined>,
    log: vscode.LogOutputChannel,
): Promise<StartedServer> {
    const config = vscode.workspace.getConfiguration('aoti-lsp');
    const tried: string[] = [];

    const exe = resolveVariables(config.get<string>('path', '').trim());
    if (exe) {
        const result = await launch({ command: exe, args: [], origin: 'setting aoti-lsp.path' }, log).result;
        if (isStarted(result)) {
            return result;
        }
        throw new ServerNotFound(
            `aoti-lsp could not start from the setting aoti-lsp.path (${exe}): ${result.detail}.`,
            'Set "aoti-lsp.path" to an aoti-lsp executable (`pip install aoti-lsp`), or clear it.',
        );
    }

    const libs = path.join(extensionPath, 'bundled', 'libs');
    const bundle = bundledVersion(libs);
    // -S: no site-packages (nor the time their .pth files take): the bundled server needs nothing
    // outside bundled/libs and the standard library, and must not pick up another copy of a
    // dependency installed in the interpreter's environment.
    const bundled = (python: string): StartedServer => {
        const server: ServerCommand = {
            command: python,
            args: ['-S', '-m', 'aoti_lsp'],
            env: {
                ...process.env,
                PYTHONPATH: [libs, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
                PYTHONNOUSERSITE: '1',
            },
            origin: `the bundled server run by ${python}`,
        };
        const child = spawnServer(server);
        log.info(`${server.origin}: spawned ${server.command} ${[...server.args, 'serve'].join(' ')} (pid ${child.pid ?? 'none'}); ` +
            `aoti-lsp ${bundle} as bundled/libs holds it (no --version probe)`);
        return { ...server, process: child, version: bundle!, versionFrom: 'bundled/libs' };
    };

    const candidates: { python: string; origin: string; explicit: boolean }[] = [];
    const setting = resolveVariables(config.get<string>('interpreter', '').trim());
    if (setting) {
        candidates.push({ python: setting, origin: 'setting aoti-lsp.interpreter', explicit: true });
    } else {
        const active = await activeInterpreter(await pythonApi());
        if (active) {
            candidates.push({ python: active, origin: 'the Python extension\'s interpreter', explicit: false });
        }
        candidates.push({ python: 'python3', origin: 'python3 on PATH', explicit: false });
    }

    for (const { python, origin, explicit } of candidates) {
        const own = launch({ command: python, args: ['-m', 'aoti_lsp'], origin }, log);
        // The bundled server comes after an environment that provides aoti_lsp, before falling
        // back to the next interpreter. It starts beside the environment's (and is killed if that
        // one answers): waiting for the environment's probe first would delay the first squiggle.
        const spare = bundle ? bundled(python) : undefined;
        // beside the probe, not after it: the bundled path would wait for both in turn (~0.1-0.3 s
        // while VS Code starts); where the environment answers, it is not awaited (-S: ~10 ms)
        const misfit = spare ? misfitsBundle(python) : undefined;
        const result = await own.result;
        if (isStarted(result)) {
            if (spare) {
                spare.process.kill();
                log.info(`the bundled server is not needed: ${python} has aoti-lsp ${result.version}`);
            }
            return result;
        }
        tried.push(`${python} (${origin}): ${result.detail}`);
        if (spare) {
            const why = await misfit;
            if (!why) {
                return spare;
            }
            spare.process.kill();
            log.info(`${spare.origin}: stopped: ${why}`);
            tried.push(`the bundled server: ${why}`);
        }
        if (explicit) {
            break;
        }
    }

    const first = candidates[0];
    const pip = `${first.python} -m pip install --upgrade aoti-lsp`;
    throw new ServerNotFound(
        `aoti-lsp could not start: ${tried.join('; ')}.`,
        `Install it with \`${pip}\`, or set "aoti-lsp.interpreter" to a Python that has it.`,
    );
}
