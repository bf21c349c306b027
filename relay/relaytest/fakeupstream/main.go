// Command fakeupstream serves the relaytest fake OpenAI/Anthropic upstream on an address, for benchmarks and
// manual runs:
//
//	go run ./relay/relaytest/fakeupstream -addr 127.0.0.1:8089 -chunks 20 -chunk-delay 5ms
//	curl -s localhost:8089/v1/chat/completions -d '{"model":"m","stream":true}'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"tollgate/relay/relaytest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8089", "listen address")
	chunks := flag.Int("chunks", relaytest.DefaultChunks, "content deltas per stream")
	chunkDelay := flag.Duration("chunk-delay", 0, "pause between content deltas")
	headerDelay := flag.Duration("first-byte-delay", 0, "delay before the status line and headers")
	firstChunk := flag.Duration("first-chunk-delay", 0, "delay between stream headers and the first event")
	usage := flag.Bool("usage", true, "report usage")
	prompt := flag.Int("prompt-tokens", relaytest.DefaultPromptTokens, "prompt tokens reported")
	completion := flag.Int("completion-tokens", relaytest.DefaultCompletionTokens, "completion tokens reported")
	failStatus := flag.Int("fail-status", 0, "answer every request with this error status (0: succeed)")
	flag.Parse()

	opts := []relaytest.Option{
		relaytest.WithRecording(false), relaytest.WithChunks(*chunks), relaytest.WithChunkDelay(*chunkDelay),
		relaytest.WithHeaderDelay(*headerDelay), relaytest.WithFirstChunkDelay(*firstChunk),
		relaytest.WithUsage(*usage), relaytest.WithTokens(*prompt, *completion),
	}
	if *failStatus != 0 {
		opts = append(opts, relaytest.Fail(relaytest.Status(*failStatus)))
	}
	h := relaytest.NewHandler(opts...)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		h.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	slog.Info("fake upstream listening", "addr", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
