import pytest


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true", help="rewrite expected fixture outputs")


@pytest.fixture
def update_goldens(request):
    return request.config.getoption("--update-goldens")
