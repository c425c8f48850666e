package serve

// The test helpers of package serve, for its external tests (serve_test),
// which drive the frontends through package client.
var (
	NewTestServer  = newTestServer
	AllDatatypes   = allDatatypes
	AffineWant     = affineWant
	BuildCommand   = buildCommand
	StartServe     = startServe
	SelfSigned     = selfSigned
	DatatypeValues = datatypeValues
	Quiet          = quiet
	RSSOf          = rssOf
)
