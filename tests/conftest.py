"""pytest configuration shared by the test suite."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: a test of more than a few seconds (a fuzz); deselect with "
        "-m 'not slow'",
    )
