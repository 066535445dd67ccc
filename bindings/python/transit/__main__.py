"""python -m transit: how this transit package was built (transit.build_info()), one line each."""
import sys

import transit


def main():
    info = transit.build_info()
    width = max(len(k) for k in info)
    for key, value in info.items():
        print(f"{key:<{width}}  {value}")
    print(f"{'package':<{width}}  {transit.__file__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
