"""A module's logger, with logging imported when something is logged: logging (traceback,
string, threading) is ~3 ms of a one-file check that logs nothing."""


def logger(name: str):
    import logging

    return logging.getLogger(name)
