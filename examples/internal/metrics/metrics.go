// Package metrics gives the demos their telemetry: the askotel observer on an
// OpenTelemetry meter provider whose reader is the Prometheus exporter, and the handler
// that serves what it gathers at /metrics.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/askuser-go/askuser/integrations/askotel"
	"github.com/askuser-go/askuser/observe"
)

// New returns the observer to give the dispatcher and the hub, and the /metrics handler.
// Each call has a registry of its own.
func New() (observe.Observer, http.Handler, error) {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, err
	}
	obs, err := askotel.NewObserver(askotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))))
	if err != nil {
		return nil, nil, err
	}
	return obs, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}
