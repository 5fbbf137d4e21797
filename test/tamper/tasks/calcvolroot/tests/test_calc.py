import sys

sys.path.insert(0, "/app")
from calc import add  # noqa: E402

assert add(2, 3) == 5, add(2, 3)
assert add(-1, 1) == 0, add(-1, 1)
print("test_calc: all passed")
