package serve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their files and the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, cert *x509.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "onnxvk test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return certFile, keyFile, cert
}

func TestHTTPTLS(t *testing.T) {
	s := newTestServer(t, 0, 8)
	certFile, keyFile, cert := selfSigned(t)
	h, err := NewHTTP(s, "127.0.0.1:0", HTTPOptions{CertFile: certFile, KeyFile: keyFile})
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- h.Serve() }()
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + h.Addr() + "/v2/health/live")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	// Plain HTTP to the TLS port gets the server's 400 ("client sent an
	// HTTP request to an HTTPS server").
	plain, err := http.Get("http://" + h.Addr() + "/v2/health/live")
	require.NoError(t, err)
	plain.Body.Close()
	assert.Equal(t, 400, plain.StatusCode)
	require.NoError(t, h.Shutdown(t.Context()))
	require.NoError(t, <-served)

	_, err = NewHTTP(s, "127.0.0.1:0", HTTPOptions{CertFile: certFile})
	assert.ErrorContains(t, err, "both a certificate and a key")
	_, err = NewHTTP(s, "127.0.0.1:0", HTTPOptions{CertFile: keyFile, KeyFile: keyFile})
	assert.Error(t, err)
}
