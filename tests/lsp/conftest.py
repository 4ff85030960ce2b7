"""pytest-lsp fixtures: the real server over stdio, driven with the capabilities of real
clients: VS Code (UTF-16, push), Neovim 0.11 (UTF-8, pull), Emacs 29 (UTF-32, push)."""

import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from helpers import write_project

SERVER = [sys.executable, "-m", "aoti_lsp", "serve", "--stdio"]
PROFILES = ["visual-studio-code", "neovim@v0.11.0", "emacs"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=PROFILES)
async def client(lsp_client: LanguageClient, request, tmp_path):
    caps = client_capabilities(request.param)
    marker = request.node.get_closest_marker("project")
    if marker is not None:  # on disk before the editor starts, as a user's project is: the index reads it
        write_project(tmp_path, marker.args[0])

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params):  # real clients accept the file watcher registration
        lsp_client.registrations = getattr(lsp_client, "registrations", []) + list(params.registrations)

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=caps,
        root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
    ))
    lsp_client.profile = request.param
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()
