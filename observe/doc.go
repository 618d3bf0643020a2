// Package observe tells of what happens to a dispatcher's calls and requests and to a
// transport's devices, for traces, metrics and logs: an [Observer] given to
// askuser.Options (and to wshub.Options) is told of each call as it begins and ends, and
// of each request asked, ended or decided, each refused device event, each notice and
// each device that comes or goes. [Log] logs to a log/slog Logger, [Hooks] calls plain
// functions, [Join] combines observers; the askotel module's observer exports
// OpenTelemetry traces and metrics.
package observe
