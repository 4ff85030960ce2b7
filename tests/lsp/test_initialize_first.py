"""The server answers `initialize`, and the opened file's diagnostics, while a large workspace is
still being indexed (issue 23 item 5: an editor's first squiggle must not wait for the index).
The index's end is seen from outside: the AOTI001 migration is withheld until every file of the
workspace is read (server.code_action), and offered after."""

import asyncio
import sys
import time

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from helpers import diagnostics, open_doc

SERVER = [sys.executable, "-m", "aoti_lsp", "serve", "--stdio"]
FILES = 4000  # ~0.6 ms each to summarise here: an index of seconds, the first answers in far less
MODULE = """import torch
from pkg.m{j} import run{j}

PKG = "art{i}.pt2"

def build{i}(model, x):
    ep = torch.export.export(model, (x,))
    return torch._inductor.aoti_compile_and_package(ep, package_path=PKG)

def run{i}(x):
    return torch._inductor.aoti_load_package(PKG)(x)
"""
OPENED = """import torch

model = torch.nn.Linear(4, 2)
x = torch.randn(3, 4)
so = torch._export.aot_compile(model, (x,))
runner = torch._export.aot_load(so, "cpu")
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER),
                    params=["visual-studio-code", "neovim@v0.11.0"])
async def client(lsp_client: LanguageClient, request, tmp_path):
    (tmp_path / "pkg").mkdir()
    for i in range(FILES):  # on disk before the server starts, as when an editor opens a folder
        (tmp_path / "pkg" / f"m{i}.py").write_text(MODULE.format(i=i, j=(i + 1) % FILES))

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params):
        pass

    start = time.monotonic()
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
    ))
    lsp_client.initialized_at = time.monotonic()
    lsp_client.initialize_s = lsp_client.initialized_at - start
    lsp_client.server_info = result.server_info
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


async def _migration_offered(client, uri, diags) -> bool:
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=diags[0].range,
        context=types.CodeActionContext(diagnostics=diags))) or []
    return any(a.title.startswith("aoti-lsp (AOTI001): Migrate") for a in actions)


async def test_initialize_and_first_diagnostics_come_before_the_workspace_index(client):
    from aoti_lsp import __version__

    # serverInfo carries the version: the VS Code extension reads it instead of waiting for a probe
    assert client.server_info is not None and client.server_info.version == __version__
    uri = await open_doc(client, client.root / "app.py", OPENED)
    diags = [d for d in await diagnostics(client, uri, timeout=30.0) if d.code == "AOTI001"]
    assert diags, "no AOTI001 on the opened file"
    # still indexing: initialize and the first diagnostics did not wait for the 4000 files
    assert not await _migration_offered(client, uri, diags), (
        f"the workspace index had finished before the first diagnostics (initialize took {client.initialize_s:.2f} s)")
    deadline = time.monotonic() + 120
    while not await _migration_offered(client, uri, diags):  # the index ends, the migration comes
        assert time.monotonic() < deadline, "the workspace index never finished"
        await asyncio.sleep(0.1)
    index_s = time.monotonic() - client.initialized_at
    print(f"initialize answered in {client.initialize_s:.2f} s; the index ended {index_s:.2f} s later")
    # an index run inside initialize would make it the longer of the two
    assert client.initialize_s < index_s, (client.initialize_s, index_s)


def test_the_server_start_imports_no_triage_nor_fix_builder():
    """What every editor's first squiggle waits for: importing the server. Crash-log triage (the
    explain command), the .pt2 reader and libcst are imported by the requests that use them."""
    import subprocess

    code = ("import sys, aoti_lsp.lsp.server; print(sorted(m for m in sys.modules if m in "
            "('aoti_lsp.triage.explain', 'aoti_lsp.analysis.pt2', 'libcst', 'zipfile')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
