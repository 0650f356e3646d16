#!/usr/bin/env bash
# Makes the test key material of the TLS tests, read by org.rds4j.core.testkit.TestTls (run once; the files are
# committed): a CA of the test "cluster", two nodes it signed (node-a, node-b), and a rogue node whose self-signed
# certificate nobody trusts. EC P-256 keys, valid for 100 years. Store password: changeit. Needs the JDK's keytool.
set -euo pipefail
cd "$(dirname "$0")"
rm -f ./*.p12 ./*.pem ./*.csr
K="keytool -storetype PKCS12 -storepass changeit -keypass changeit"
$K -genkeypair -alias ca -keyalg EC -groupname secp256r1 -dname "CN=rds4j test CA" -ext bc:c -validity 36500 \
    -keystore ca.p12
$K -exportcert -rfc -alias ca -keystore ca.p12 -file ca.pem
for n in node-a node-b; do
    $K -genkeypair -alias "$n" -keyalg EC -groupname secp256r1 -dname "CN=$n" -validity 36500 -keystore "$n.p12"
    $K -certreq -alias "$n" -keystore "$n.p12" -file "$n.csr"
    $K -gencert -alias ca -keystore ca.p12 -infile "$n.csr" -outfile "$n.pem" -rfc -validity 36500 \
        -ext ku:c=digitalSignature -ext eku=serverAuth,clientAuth
    $K -importcert -noprompt -alias ca -file ca.pem -keystore "$n.p12"
    $K -importcert -noprompt -alias "$n" -file "$n.pem" -keystore "$n.p12"
done
$K -genkeypair -alias rogue -keyalg EC -groupname secp256r1 -dname "CN=rogue" -validity 36500 -keystore rogue.p12
$K -importcert -noprompt -alias ca -file ca.pem -keystore trust.p12
rm -f ./*.csr ./node-*.pem ca.p12
