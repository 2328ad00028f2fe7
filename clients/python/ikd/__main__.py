"""python -m ikd [--url URL] [--token TOKEN] import FILE [--scale S] [--fps F] [--format F]:
print the server's import reply (JSON). URL: default $IKD_URL, else http://127.0.0.1:8080."""
import argparse
import json
import sys

from . import Client, IkdError


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ikd", description=__doc__.split("\n")[0])
    ap.add_argument("--url", default=None, help="the server (default $IKD_URL, else http://127.0.0.1:8080)")
    ap.add_argument("--token", default=None, help="bearer token (--api-token)")
    sub = ap.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="import a BVH, glTF or URDF file and print the reply")
    imp.add_argument("file")
    imp.add_argument("--format", choices=["bvh", "glb", "gltf", "urdf"])
    imp.add_argument("--scale", type=float)
    imp.add_argument("--fps", type=float)
    imp.add_argument("--skin", type=int)
    imp.add_argument("--humanoid", choices=["auto", "off"])
    imp.add_argument("--limits", choices=["file", "humanoid", "none"])
    args = ap.parse_args(argv)
    client = Client(args.url, token=args.token)
    try:
        reply = client.import_file(args.file, format=args.format, scale=args.scale, fps=args.fps, skin=args.skin,
                                   humanoid=args.humanoid, limits=args.limits)
    except IkdError as e:
        print("ikd: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("ikd: %s" % e, file=sys.stderr)
        return 1
    json.dump(reply, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
