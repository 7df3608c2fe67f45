"""A module whose body runs once, imported by frame_workload.py."""


def helper():
    return 1


VALUE = helper()
