package core

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// ClientConfig builds the tls.Config for reaching host: verification on unless
// InsecureSkipVerify, the CA file as the only roots when given, a client certificate
// for mutual TLS, TLS 1.2 or newer. Every problem is an error: there is no plaintext
// fallback.
func (t TLSConfig) ClientConfig(host string) (*tls.Config, error) {
	tc := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	switch t.MinVersion {
	case "", "1.2":
	case "1.3":
		tc.MinVersion = tls.VersionTLS13
	default:
		return nil, fmt.Errorf("tls min_version %q is not 1.2 or 1.3", t.MinVersion)
	}
	if tc.ServerName == "" {
		tc.ServerName = host
	}
	if f := t.CAFile; f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("tls ca_file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca_file %s: no PEM certificate in it", f)
		}
	}
	if t.CertFile != "" || t.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// Summary says how TLS is set up, for the manifest and the report, e.g.
// "verified, server name x, TLS 1.3 or later"; never a file's path.
func (t TLSConfig) Summary() string {
	parts := []string{"verified"}
	if t.InsecureSkipVerify {
		parts[0] = "NOT VERIFIED (insecure_skip_verify)"
	}
	if t.ServerName != "" {
		parts = append(parts, "server name "+t.ServerName)
	}
	if t.CertFile != "" {
		parts = append(parts, "client certificate")
	}
	if t.MinVersion != "" {
		parts = append(parts, "TLS "+t.MinVersion+" or later")
	}
	return strings.Join(parts, ", ")
}
