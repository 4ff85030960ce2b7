// "aoti-lsp: Explain crash log": the selection (or the clipboard) and a .pt2 package go to the
// server's `aoti-lsp.explain` command; the trace goes to an output channel, and the steps that
// point into the user's source are offered in a quick pick that opens them.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';

interface Step {
    text: string;
    path?: string | null;
    line?: number | null;
    location?: { uri: string; range: { start: { line: number; character: number } } };
}
interface Item {
    kind: string;
    message: string;
    trace: Step[];
    cause: string;
    fixes: string[];
}
interface Answer {
    text: string;
    items: Item[];
}

let channel: vscode.OutputChannel | undefined;

async function crashLog(): Promise<string> {
    const editor = vscode.window.activeTextEditor;
    const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
    return selected.trim() ? selected : vscode.env.clipboard.readText();
}

export async function explainCrashLog(client: LanguageClient | undefined): Promise<void> {
    if (!client || !client.isRunning()) {
        void vscode.window.showErrorMessage('aoti-lsp: the server is not running.');
        return;
    }
    const log = await crashLog();
    if (!log.trim()) {
        void vscode.window.showErrorMessage('aoti-lsp: select the crash log (or copy it to the clipboard) first.');
        return;
    }
    const picked = await vscode.window.showOpenDialog({
        title: 'aoti-lsp: the .pt2 package that crashed (Cancel: explain without it)',
        canSelectMany: false,
        filters: { 'AOTInductor package': ['pt2'] },
    });
    const sources = vscode.workspace.textDocuments
        .filter((d) => d.languageId === 'python' && d.uri.scheme === 'file')
        .map((d) => d.uri.fsPath);
    const { ExecuteCommandRequest } = await import('vscode-languageclient/node'); // loaded: the client runs
    const answer = (await client.sendRequest(ExecuteCommandRequest.type, {
        command: 'aoti-lsp.explain',
        arguments: [{ log, package: picked?.[0]?.fsPath ?? null, sources }],
    })) as Answer | null;
    if (!answer) {
        void vscode.window.showErrorMessage('aoti-lsp: the explanation failed (see the aoti-lsp output).');
        return;
    }
    channel ??= vscode.window.createOutputChannel('aoti-lsp: explain');
    channel.clear();
    channel.appendLine(answer.text); // `path:line:` prefixes are links in the output view
    channel.show(true);
    const located = answer.items.flatMap((item) => item.trace.filter((s) => s.location));
    if (located.length === 0) {
        return;
    }
    const choice = await vscode.window.showQuickPick(
        located.map((s) => ({
            label: `${vscode.workspace.asRelativePath(vscode.Uri.parse(s.location!.uri))}:${s.location!.range.start.line + 1}`,
            detail: s.text,
            step: s,
        })),
        { title: 'aoti-lsp: crash trace in your source', placeHolder: 'Open a step of the trace' },
    );
    if (choice) {
        const start = choice.step.location!.range.start;
        const position = new vscode.Position(start.line, start.character);
        await vscode.window.showTextDocument(vscode.Uri.parse(choice.step.location!.uri), {
            selection: new vscode.Range(position, position),
        });
    }
}
