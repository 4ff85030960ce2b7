"""The server indexes the project of each workspace folder, found as the CLI finds it: a folder
opened below the project root still sees the compile site in a sibling folder, and the server
and the CLI share one cache file."""

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from helpers import start_session

PROJECT = Path(__file__).parents[1] / "projects" / "aoti102_cross_file"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "aoti_lsp", "serve"]))
async def client(lsp_client: LanguageClient, tmp_path):
    proj = tmp_path / "proj"
    (proj / "app").mkdir(parents=True)
    shutil.copytree(PROJECT / "scripts", proj / "scripts")
    shutil.copy(PROJECT / "app.py", proj / "app" / "app.py")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)

    await start_session(lsp_client, client_capabilities("visual-studio-code"), proj / "app", name="app")  # only the sub-folder
    lsp_client.proj = proj
    yield
    await lsp_client.shutdown_session()


async def test_folder_below_the_root_sees_the_whole_project(client):
    app = client.proj / "app" / "app.py"
    uri = app.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, app.read_text())))
    loop = asyncio.get_running_loop()
    deadline, codes = loop.time() + 15, []
    while loop.time() < deadline:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri)))
        codes = [(d.code, d.range.start.line) for d in report.items]
        if ("AOTI102", 11) in codes:
            break
        await asyncio.sleep(0.1)
    assert ("AOTI102", 11) in codes
    caches = sorted((client.proj / ".aoti_lsp_cache").glob("*.json"))
    assert len(caches) == 1  # written at the project root, not in the folder
    cli = subprocess.run([str(Path(sys.executable).with_name("aoti-lsp")), "--check", "app/app.py"], cwd=client.proj,
                         capture_output=True, text=True)
    assert cli.returncode == 1 and "AOTI102" in cli.stdout
    assert sorted((client.proj / ".aoti_lsp_cache").glob("*.json")) == caches  # the same cache file
