import asyncio

from lsprotocol import types


def is_pull(client) -> bool:
    return client.capabilities.text_document.diagnostic is not None


def encoding(client) -> str:
    general = client.capabilities.general
    encs = (general.position_encodings if general else None) or ["utf-16"]
    return encs[0]


def write_project(root, files: dict) -> None:
    """Writes {relative path: dedented text} under `root`."""
    import textwrap

    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip())


async def open_doc(client, path, text, version=1):
    path.write_text(text, "utf-8")
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri


async def diagnostics(client, uri, min_version=None, timeout=10.0):
    """The current diagnostics of a document, pulled or pushed as the profile does."""
    if is_pull(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri)))
        return list(report.items)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if uri in client.diagnostics:
            return list(client.diagnostics[uri])
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    raise AssertionError(f"no diagnostics published for {uri}")


async def next_push(client, uri, timeout=10.0):
    client.diagnostics.pop(uri, None)
    return await asyncio.wait_for(diagnostics(client, uri), timeout)


def apply_edits(text: str, edits, enc: str) -> str:
    """Applies LSP TextEdits (in the negotiated encoding) to text: the client's side of the deal."""
    lines = text.split("\n")

    def offset(pos):
        line = lines[pos.line] if pos.line < len(lines) else ""
        before = sum(len(l) + 1 for l in lines[: pos.line])
        count, i = 0, 0
        while i < len(line) and count < pos.character:
            ch = line[i]
            count += {"utf-8": len(ch.encode()), "utf-16": 2 if ord(ch) > 0xFFFF else 1, "utf-32": 1}[enc]
            i += 1
        return before + i

    # every range refers to the original text (LSP): resolve them all first, then splice from
    # the end; edits that start at the same place go in in array order (an insert, then a replace)
    spans = [(offset(e.range.start), offset(e.range.end), i, e.new_text) for i, e in enumerate(edits)]
    out, last = [], len(text)
    for s, t, _, new in sorted(spans, key=lambda x: (x[0], x[2]), reverse=True):
        out.append(text[t:last])
        out.append(new)
        last = s
    out.append(text[:last])
    return "".join(reversed(out))


def edits_of(action, uri):
    edit = action.edit
    if edit.document_changes:
        return [e for dc in edit.document_changes for e in dc.edits]
    return edit.changes[uri]


async def start_session(client, capabilities, folder, name: str = "ws", root: bool = False):
    """initialize with `folder` as the workspace (and as rootUri: `root`), the server's
    registrations (the file watcher) accepted as real clients accept them."""
    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params):
        return None

    return await client.initialize_session(types.InitializeParams(
        capabilities=capabilities, root_uri=folder.as_uri() if root else None,
        workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name=name)]))
