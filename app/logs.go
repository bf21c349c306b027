package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"tollgate/model"
	"tollgate/service/usagelog"
)

// openLogs attaches the separate log database (LOG_SQL_DSN) and opens the spool that holds log rows while it is
// down. A log database that is down at start does not stop the node: its tables are created by a retry loop,
// and the writer spools meanwhile.
func (a *App) openLogs(ctx context.Context) ([]usagelog.Option, error) {
	if a.Cfg.LogSQLDSN == "" {
		return nil, nil
	}
	ls, err := model.OpenLogs(a.Cfg.LogSQLDSN)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func(context.Context) error { return ls.Close() })
	a.Store.AttachLogs(ls)
	sp, err := usagelog.OpenSpool(a.Cfg.LogSpoolDir, a.Cfg.LogSpoolMaxBytes)
	if err != nil {
		return nil, fmt.Errorf("LOG_SPOOL_DIR: %w", err)
	}
	mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = ls.MigrateLogs(mctx)
	cancel()
	if err != nil {
		slog.Error("log database unavailable at start; retrying its migration, spooling logs meanwhile", "err", err)
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Second):
				}
				c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := ls.MigrateLogs(c)
				cancel()
				if err == nil {
					slog.Info("log database migrated")
					return
				}
			}
		}()
		a.closers = append(a.closers, func(context.Context) error { close(stop); <-done; return nil })
	}
	return []usagelog.Option{usagelog.WithSpool(sp)}, nil
}

// startRetention runs the log retention job (log_retention_days) in the background on this node; the cache
// lock lets one node at a time delete.
func (a *App) startRetention() {
	a.Retention = usagelog.NewRetention(a.Store, a.Cache, func() int { return a.Settings.Get().LogRetentionDays })
	a.Retention.Start()
	a.closers = append(a.closers, a.Retention.Close)
}
