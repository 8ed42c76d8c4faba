package live

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cmpbench/cmpbench/archive/report"
)

// DefaultAddr is where --live listens when given no address: loopback, a free
// port.
const DefaultAddr = "127.0.0.1:0"

// heartbeat is how often the events say something when nothing changed, so
// that a page (and any proxy between) knows the stream is alive.
const heartbeat = time.Second

// drain bounds the wait, at the end, for the pages to be sent the run's end.
const drain = 3 * time.Second

//go:embed assets/live.html.tmpl assets/live.js
var assets embed.FS

var pageTemplate = template.Must(template.ParseFS(assets, "assets/live.html.tmpl"))

// Server serves a Live on one listener: the page (/), its events (/events),
// its state as JSON (/state) and the metrics (/metrics). Every endpoint is
// read-only: GET and HEAD only.
type Server struct {
	l        *Live
	srv      *http.Server
	ln       net.Listener
	page     []byte
	served   chan struct{}
	closing  chan struct{} // closed when the server stops: the events end
	loopback bool
}

// Serve listens on addr (host:port; port 0 picks a free one) and serves l.
func Serve(l *Live, addr string) (*Server, error) {
	page, err := renderPage(l)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--live %s: %w", addr, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{l})
	s := &Server{l: l, ln: ln, page: page, served: make(chan struct{}), closing: make(chan struct{}), loopback: isLoopback(ln.Addr())}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.servePage)
	mux.HandleFunc("/events", s.serveEvents)
	mux.HandleFunc("/state", s.serveState)
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	s.srv = &http.Server{Handler: readOnly(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // ends with Close
	}()
	return s, nil
}

// URL is the page's address.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// Loopback says whether only this machine can reach the server.
func (s *Server) Loopback() bool { return s.loopback }

func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// Close sends the pages the run's end (Live.Ended), waits a little for them to
// take it, and stops serving.
func (s *Server) Close() error {
	close(s.closing)
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	<-s.served
	return err
}

// readOnly refuses every method but GET and HEAD.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// The page fetches nothing but its own events.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
	_, _ = w.Write(s.page)
}

func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	b, _, _, _ := s.l.snapshotJSON()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// serveEvents sends the state whenever it changes, a heartbeat when it did
// not for a second, and ends after sending the run's end, or the last state
// when the server stops.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	flush, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	var sent uint64
	stopping := false
	for first := true; ; first = false {
		b, version, changed, ended := s.l.snapshotJSON()
		switch {
		case first || version != sent:
			if _, err := fmt.Fprintf(w, "event: state\ndata: %s\n\n", b); err != nil {
				return
			}
			sent = version
		default:
			if _, err := w.Write([]byte(": alive\n\n")); err != nil {
				return
			}
		}
		flush.Flush()
		if ended || stopping {
			return
		}
		select {
		case <-changed:
		case <-time.After(heartbeat):
		case <-s.closing:
			stopping = true
		case <-r.Context().Done():
			return
		}
	}
}

// renderPage is the page, the same for the whole run: its data arrives as
// events.
func renderPage(l *Live) ([]byte, error) {
	own, err := assets.ReadFile("assets/live.js")
	if err != nil {
		return nil, err
	}
	a, err := report.PageAssets(string(own))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = pageTemplate.Execute(&b, struct {
		Title string
		report.Assets
	}{fmt.Sprintf("cmpbench run of suite %s (live)", l.red.String(l.o.Suite)), a})
	return b.Bytes(), err
}
