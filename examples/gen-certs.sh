#!/bin/sh
# gen-certs.sh DIR: writes a throwaway certificate authority and certificates for
# benchmarking TLS on this machine: ca.crt, server.crt/server.key (for 127.0.0.1,
# ::1 and localhost) and client.crt/client.key (for mutual TLS), valid 30 days.
# Test certificates only: never use them for anything that matters.
set -eu
dir=${1:?usage: gen-certs.sh DIR}
command -v openssl >/dev/null || { echo "gen-certs.sh: openssl is not installed (apt-get install -y openssl)" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
umask 077
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

key ca.key
openssl req -x509 -new -key ca.key -sha256 -days 30 -subj "/CN=cmpbench test CA" \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.crt

issue() { # name extendedKeyUsage
	key "$1.key"
	openssl req -new -key "$1.key" -subj "/CN=cmpbench test $1" -out "$1.csr"
	printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" "extendedKeyUsage=$2" \
		"subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -sha256 \
		-extfile "$1.ext" -out "$1.crt" 2>/dev/null
	rm -f "$1.csr" "$1.ext"
}
issue server serverAuth
issue client clientAuth
rm -f ca.srl
chmod 644 ca.crt server.crt client.crt
echo "certificates in $dir: ca.crt server.crt server.key client.crt client.key"
