#!/bin/sh
# torchviz draws with Graphviz's `dot` program, which pip cannot install. Install it from the
# system's packages when this machine allows it; otherwise stop with the exact command to run.
if command -v dot >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "Graphviz's 'dot' is missing. Install Graphviz (macOS: brew install graphviz;"
    echo "conda: conda install -c conda-forge graphviz), then run this command again."
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo"
else
    echo "Graphviz's 'dot' is missing. Install it, then run this command again:"
    echo "    sudo apt-get install -y graphviz"
    exit 1
fi
echo "==> Installing Graphviz (apt-get install graphviz)"
$sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q graphviz
