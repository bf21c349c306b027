// Command tollgate is a self-hosted LLM API gateway for resellers. main wires configuration to the App and
// runs the HTTP server with graceful shutdown.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"tollgate/app"
	"tollgate/config"
	"tollgate/service/gcpace"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tollgate:", err)
		os.Exit(1)
	}
}

func run() error {
	unmapHugeText()
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return err
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})))
	generatedSecret, err := cfg.EnsureSecret()
	if err != nil {
		return err
	}
	if generatedSecret {
		slog.Warn("SECRET_KEY was not set: generated one and stored it; back it up, it encrypts every key", "file", cfg.SecretKeyFile)
	}
	app.LogStart(cfg)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, rootPw, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		return err
	}
	if rootPw != "" {
		fmt.Fprintf(os.Stderr, "\n  Created user 'root' with password: %s\n  (shown once; change it after signing in)\n\n", rootPw)
	}
	if cfg.GCHeadroomMB > 0 {
		defer gcpace.Start(gcpace.Options{Headroom: uint64(cfg.GCHeadroomMB) << 20}).Stop()
	}
	srv := &http.Server{
		Addr:              ":" + strconv.Itoa(cfg.Port),
		Handler:           a.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.ListenAndServe() }()
	if cfg.MetricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", a.Metrics.Handler())
		// Profiles only on the internal listener: they reveal internals and cost CPU while running.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		msrv := &http.Server{Addr: cfg.MetricsAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { errc <- msrv.ListenAndServe() }()
		defer msrv.Close()
		slog.Info("metrics listening", "addr", cfg.MetricsAddr)
	}
	slog.Info("listening", "addr", srv.Addr)
	select {
	case err := <-errc:
		_ = a.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down: draining requests")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		slog.Warn("shutdown", "err", err)
	}
	return a.Close(sctx)
}
