package resp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/cmpbench/cmpbench/core"
)

func TestParseInfo(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nvalkey_version:8.0.1\r\n\r\n# Keyspace\r\ndb0:keys=10,expires=0,avg_ttl=0\r\n"
	m := ParseInfo(info)
	if m["server.redis_version"] != "7.0.15" || m["keyspace.db0"] != "keys=10,expires=0,avg_ttl=0" {
		t.Fatalf("%v", m)
	}
}

func TestRedactConfig(t *testing.T) {
	tests := map[string]bool{
		"requirepass": true, "masterauth": true, "tls-key-file-pass": true, "tls-client-key-file-pass": true,
		"maxmemory": false, "tls-auth-clients": false, "masteruser": false, "appendonly": false,
	}
	for k, want := range tests {
		if got := RedactConfig(k); got != want {
			t.Errorf("RedactConfig(%q) = %v", k, got)
		}
	}
	out := formatConfig(map[string]string{"requirepass": "hunter22", "maxmemory": "0", "masterauth": ""})
	if strings.Contains(out, "hunter22") || !strings.Contains(out, "requirepass [redacted]") || !strings.Contains(out, "maxmemory 0") {
		t.Fatalf("%q", out)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		class core.ErrorClass
		miss  bool
	}{
		{"nil reply is a miss", rueidis.Nil, 0, true},
		{"closing client", rueidis.ErrClosing, core.ErrClassConnection, false},
		{"parse error", errors.New("received unexpected simple string message ending without CRLF"), core.ErrClassProtocol, false},
		{"other", errors.New("something"), core.ErrClassOther, false},
	}
	for _, tc := range tests {
		class, miss := classify(tc.err)
		if class != tc.class || miss != tc.miss {
			t.Errorf("%s: class %s miss %v", tc.name, class, miss)
		}
	}
}

func TestRefusal(t *testing.T) {
	tests := []struct {
		err     error
		refused bool
	}{
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{errors.New("write: connection reset by peer"), false},
		{errors.New("remote error: tls: certificate required"), true},
		{x509.UnknownAuthorityError{}, true},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true},
	}
	for _, tc := range tests {
		if got := errors.Is(refusal(tc.err), core.ErrRefused); got != tc.refused {
			t.Errorf("refusal(%v) = %v", tc.err, got)
		}
	}
}
