{{- /*
The chart's checks of its values, beyond what values.schema.json can say: every rule the agent
(src/config/agent-config-schema.ts) and the controller (src/cli/controller-command.ts,
src/election/leader-elector.ts) apply at start, so that a value they would refuse fails
`helm template`, `install`, `upgrade` and `lint` instead of crash-looping every pod. Lines read
as the agent's own: `key: value must be rule`, one per problem; the single-value rules first, the
cross-field rules only once every value passed its own (so one typo is one line). Empty values
mean the defaults in files/defaults.yaml.

Durations are parsed as the agent parses them (the same float arithmetic, part by part), so a
value sits on the same side of every bound here as in the agent.
*/ -}}

{{- /* Milliseconds of a Go (or Prometheus) duration string, printed as a float. */ -}}
{{- define "nodepulse.durationMs" -}}
{{- $units := dict "ns" 0.000001 "us" 0.001 "µs" 0.001 "ms" 1.0 "s" 1000.0 "m" 60000.0 "h" 3600000.0 "d" 86400000.0 "w" 604800000.0 "y" 31536000000.0 }}
{{- $total := 0.0 }}
{{- range $part := regexFindAll "([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|ms|s|m|h|d|w|y)" . -1 }}
{{- $unit := regexFind "(ns|us|µs|ms|s|m|h|d|w|y)$" $part }}
{{- $total = addf $total (mulf (trimSuffix $unit $part | float64) (get $units $unit)) }}
{{- end }}
{{- $total }}
{{- end }}

{{- /* Milliseconds as Go prints a duration: 250ms, 10s, 1m30s, 1h0m0s. */ -}}
{{- define "nodepulse.formatMs" -}}
{{- $ms := float64 . }}
{{- if lt $ms 1000.0 }}{{ printf "%vms" $ms }}
{{- else }}
{{- $s := divf $ms 1000.0 }}
{{- $h := floor (divf $s 3600.0) }}
{{- $m := floor (divf (subf $s (mulf $h 3600.0)) 60.0) }}
{{- $sec := subf (subf $s (mulf $h 3600.0)) (mulf $m 60.0) }}
{{- if gt $h 0.0 }}{{ printf "%vh" $h }}{{ end }}
{{- if or (gt $h 0.0) (gt $m 0.0) }}{{ printf "%vm" $m }}{{ end }}
{{- printf "%vs" $sec }}
{{- end }}
{{- end }}

{{- /*
Every agent duration, resolved: {key: {text, ms}}, as JSON. Empty values take the defaults;
renewInterval and stuckWindow are derived as the agent derives them.
*/ -}}
{{- define "nodepulse.agentTimings" -}}
{{- $defaults := .Files.Get "files/defaults.yaml" | fromYaml }}
{{- $derived := $defaults.agentDerived }}
{{- $out := dict }}
{{- range $key := list "relistPeriod" "relistThreshold" "relistDeadline" "idleWindow" "leaseDuration" "leaseRecheck" "statusPeriod" "statusDeadline" "apiTimeout" "conditionRefresh" "startupGrace" "stuckWindow" "renewInterval" }}
{{- $text := get $.Values.agent $key | toString }}
{{- if ne $text "" }}
{{- $_ := set $out $key (dict "text" $text "ms" (include "nodepulse.durationMs" $text | float64) "given" true) }}
{{- else if hasKey $defaults.agent $key }}
{{- $d := get $defaults.agent $key | toString }}
{{- $_ := set $out $key (dict "text" $d "ms" (include "nodepulse.durationMs" $d | float64) "given" false) }}
{{- end }}
{{- end }}
{{- if not (hasKey $out "stuckWindow") }}
{{- $ms := addf $out.relistDeadline.ms (include "nodepulse.durationMs" $derived.stuckWindowSlack | float64) }}
{{- $_ := set $out "stuckWindow" (dict "text" (printf "%s (agent.relistDeadline + %s)" (include "nodepulse.formatMs" $ms) $derived.stuckWindowSlack) "ms" $ms "given" false) }}
{{- end }}
{{- if not (hasKey $out "renewInterval") }}
{{- $ms := round (mulf $out.leaseDuration.ms $derived.renewIntervalFraction) 0 }}
{{- $_ := set $out "renewInterval" (dict "text" (printf "%s (agent.leaseDuration × %v)" (include "nodepulse.formatMs" $ms) $derived.renewIntervalFraction) "ms" $ms "given" false) }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{- /* The controller's durations the rules read: {key: {text, ms}}, as JSON. */ -}}
{{- define "nodepulse.controllerTimings" -}}
{{- $defaults := (.Files.Get "files/defaults.yaml" | fromYaml).controller }}
{{- $c := .Values.controller }}
{{- $pairs := list (list "grace" $c.grace $defaults.grace) (list "monitorPeriod" $c.monitorPeriod $defaults.monitorPeriod) (list "leaderElection.leaseDuration" $c.leaderElection.leaseDuration $defaults.leaderElection.leaseDuration) (list "leaderElection.renewDeadline" $c.leaderElection.renewDeadline $defaults.leaderElection.renewDeadline) (list "leaderElection.retryPeriod" $c.leaderElection.retryPeriod $defaults.leaderElection.retryPeriod) }}
{{- $out := dict }}
{{- range $p := $pairs }}
{{- $text := index $p 1 | toString | default (index $p 2) }}
{{- $_ := set $out (index $p 0) (dict "text" $text "ms" (include "nodepulse.durationMs" $text | float64)) }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{- /* Bytes of a byte size: 16777216, 16Mi, 512Ki, 16M (as resource.Quantity reads them). */ -}}
{{- define "nodepulse.bytes" -}}
{{- $suffixes := dict "" 1.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 }}
{{- $text := toString . }}
{{- $suffix := regexFind "(k|M|G|T|Ki|Mi|Gi|Ti)$" $text }}
{{- mulf (trimSuffix $suffix $text | float64) (get $suffixes $suffix) }}
{{- end }}

{{- define "nodepulse.validate" -}}
{{- $problems := list }}
{{- $a := include "nodepulse.agentTimings" . | fromJson }}
{{- $c := include "nodepulse.controllerTimings" . | fromJson }}
{{- $defaults := .Files.Get "files/defaults.yaml" | fromYaml }}
{{- /* The agent's rules of a single key, on the values given. */ -}}
{{- range $key, $t := $a }}
{{- if $t.given }}
{{- if ne (floor $t.ms) $t.ms }}
{{- $problems = append $problems (printf "agent.%s: %s must be a whole number of milliseconds" $key $t.text) }}
{{- else if and (eq $t.ms 0.0) (ne $key "startupGrace") }}
{{- $problems = append $problems (printf "agent.%s: %s must be longer than 0s" $key $t.text) }}
{{- else if gt $t.ms 86400000.0 }}
{{- $problems = append $problems (printf "agent.%s: %s must be at most 24h0m0s" $key $t.text) }}
{{- else if and (eq $key "leaseDuration") (ne (floor (divf $t.ms 1000.0)) (divf $t.ms 1000.0)) }}
{{- $problems = append $problems (printf "agent.leaseDuration: %s must be a whole number of seconds (leaseDurationSeconds is an integer)" $t.text) }}
{{- end }}
{{- end }}
{{- end }}
{{- $size := .Values.agent.maxMessageSize | toString }}
{{- if ne $size "" }}
{{- $bytes := include "nodepulse.bytes" $size | float64 }}
{{- if or (lt $bytes 1024.0) (gt $bytes 2147483647.0) (ne (floor $bytes) $bytes) }}
{{- $problems = append $problems (printf "agent.maxMessageSize: %s must be between 1Ki and 2147483647 bytes (gRPC takes a 32-bit limit)" $size) }}
{{- end }}
{{- end }}
{{- if eq .Values.leaseNamespace "kube-node-lease" }}
{{- $problems = append $problems "leaseNamespace: kube-node-lease must be a namespace other than kube-node-lease (the kubelet owns the leases there)" }}
{{- end }}
{{- /* The controller's rules of a single key. */ -}}
{{- range $key, $t := $c }}
{{- if not (gt $t.ms 0.0) }}
{{- $problems = append $problems (printf "controller.%s: %s must be a positive duration such as 5s" $key $t.text) }}
{{- end }}
{{- end }}
{{- $le := get $c "leaderElection.leaseDuration" }}
{{- if ne (floor (divf $le.ms 1000.0)) (divf $le.ms 1000.0) }}
{{- $problems = append $problems (printf "controller.leaderElection.leaseDuration: %s must be a whole number of seconds (leaseDurationSeconds is an integer)" $le.text) }}
{{- end }}
{{- $rate := .Values.controller.maxWritesPerSecond | toString }}
{{- if and (ne $rate "") (not (gt ($rate | float64) 0.0)) }}
{{- $problems = append $problems (printf "controller.maxWritesPerSecond: %s must be a number more than 0" $rate) }}
{{- end }}
{{- /* The agent's volumes: each runtime directory's name is derived from its path (helpers'
volumeName), so two paths may give one name; and an extra volume may not take a name the chart
uses. */ -}}
{{- $volumeNames := list "tmp" }}
{{- $socketFile := include "nodepulse.socketFile" . }}
{{- $paths := include "nodepulse.socketDirs" . | fromJsonArray }}
{{- if $socketFile }}{{ $paths = append $paths $socketFile }}{{ end }}
{{- range $path := $paths }}
{{- $name := include "nodepulse.volumeName" $path }}
{{- if has $name $volumeNames }}
{{- $problems = append $problems (printf "runtime.socketDirs: %s must give a volume name of its own (%s is taken)" $path $name) }}
{{- end }}
{{- $volumeNames = append $volumeNames $name }}
{{- end }}
{{- range $v := .Values.agent.extraVolumes }}
{{- if has $v.name $volumeNames }}
{{- $problems = append $problems (printf "agent.extraVolumes: %s must be a name the chart does not use (%s)" $v.name (join ", " $volumeNames)) }}
{{- end }}
{{- end }}
{{- /* The DaemonSet's rolling update: the API server refuses maxUnavailable and maxSurge both 0
(nothing could ever be replaced). */ -}}
{{- $update := .Values.updateStrategy }}
{{- if and (has (toString $update.maxUnavailable) (list "0" "0%")) (has (toString $update.maxSurge) (list "0" "0%")) }}
{{- $problems = append $problems (printf "updateStrategy.maxUnavailable: %v must be more than 0 when updateStrategy.maxSurge is %v (the rollout could replace no pod)" $update.maxUnavailable $update.maxSurge) }}
{{- end }}
{{- /* The uninstall hook: cleanup's own timeout must end before the Job's deadline kills it, so
that it can say which nodes it left. */ -}}
{{- if .Values.cleanup.enabled }}
{{- $cleanupMs := include "nodepulse.durationMs" .Values.cleanup.timeout | float64 }}
{{- if not (lt $cleanupMs (mulf (float64 .Values.cleanup.activeDeadlineSeconds) 1000.0)) }}
{{- $problems = append $problems (printf "cleanup.timeout: %s must be shorter than cleanup.activeDeadlineSeconds (%vs), or the Job's deadline ends it before it can report" .Values.cleanup.timeout .Values.cleanup.activeDeadlineSeconds) }}
{{- end }}
{{- end }}
{{- /* The NetworkPolicy's sources: an ingress rule with none admits every source, and the API
server refuses an ipBlock beside a selector in one peer. */ -}}
{{- $np := .Values.networkPolicy }}
{{- if and $np.enabled (not $np.monitoringNamespace) (not $np.extraFrom) }}
{{- $problems = append $problems "networkPolicy.monitoringNamespace: \"\" must name a namespace when networkPolicy.extraFrom is empty (a rule with no source admits every source)" }}
{{- end }}
{{- range $i, $peer := $np.extraFrom }}
{{- if and (hasKey $peer "ipBlock") (gt (len $peer) 1) }}
{{- $problems = append $problems (printf "networkPolicy.extraFrom[%d]: {%s} must be an ipBlock alone or selectors alone (the API server refuses both in one peer)" $i (keys $peer | sortAlpha | join ", ")) }}
{{- end }}
{{- end }}
{{- /* The cross-field rules, once every value passed its own. */ -}}
{{- if not $problems }}
{{- $jitter := $defaults.agentDerived.renewJitterFraction }}
{{- $rules := list
  (list "relistDeadline" "<" "relistThreshold" "")
  (list "relistPeriod" "<" "relistThreshold" "")
  (list "stuckWindow" ">" "relistDeadline" "")
  (list "idleWindow" ">" "relistPeriod" "")
  (list "renewInterval" "<" "leaseDuration" "")
  (list "renewInterval" "jitter<" "idleWindow" ", or the lease loop reads as stalled between renewals")
  (list "leaseRecheck" "<" "idleWindow" "")
  (list "statusPeriod" "<" "idleWindow" "")
  (list "statusDeadline" "<" "stuckWindow" "")
  (list "apiTimeout" "<" "stuckWindow" "")
  (list "apiTimeout" "<=" "leaseDuration" "")
}}
{{- range $r := $rules }}
{{- $x := get $a (index $r 0) }}
{{- $y := get $a (index $r 2) }}
{{- $op := index $r 1 }}
{{- $what := printf "agent.%s: %s must be" (index $r 0) $x.text }}
{{- $than := printf "agent.%s (%s)" (index $r 2) $y.text }}
{{- if and (eq $op "<") (not (lt $x.ms $y.ms)) }}
{{- $problems = append $problems (printf "%s shorter than %s" $what $than) }}
{{- else if and (eq $op ">") (not (gt $x.ms $y.ms)) }}
{{- $problems = append $problems (printf "%s longer than %s" $what $than) }}
{{- else if and (eq $op "<=") (gt $x.ms $y.ms) }}
{{- $problems = append $problems (printf "%s no longer than %s" $what $than) }}
{{- else if and (eq $op "jitter<") (not (lt (mulf $x.ms (addf 1.0 $jitter)) $y.ms)) }}
{{- $problems = append $problems (printf "%s shorter than %s with %v%% jitter added%s" $what $than (mulf $jitter 100.0) (index $r 3)) }}
{{- end }}
{{- end }}
{{- /* The Node condition loop backs off up to conditionMaxBackoff after a failed write; that wait must not read as a stall. */ -}}
{{- $condBackoff := include "nodepulse.durationMs" $defaults.agentDerived.conditionMaxBackoff | float64 }}
{{- if and .Values.nodeCondition (not (gt $a.idleWindow.ms $condBackoff)) }}
{{- $problems = append $problems (printf "agent.idleWindow: %s must be longer than %s, the Node condition loop's longest backoff after a failed write (or nodeCondition false)" $a.idleWindow.text $defaults.agentDerived.conditionMaxBackoff) }}
{{- end }}
{{- /* Across the agent and its lease readers: a renewal must land within the readers' grace. */ -}}
{{- $renew := $a.renewInterval }}
{{- if not (lt (mulf $renew.ms (addf 1.0 $jitter)) $c.grace.ms) }}
{{- $problems = append $problems (printf "agent.renewInterval: %s must be shorter than controller.grace (%s) with %v%% jitter added, or lease readers judge every node stale between renewals" $renew.text $c.grace.text (mulf $jitter 100.0)) }}
{{- end }}
{{- if not (lt $c.monitorPeriod.ms $c.grace.ms) }}
{{- $problems = append $problems (printf "controller.monitorPeriod: %s must be shorter than controller.grace (%s)" $c.monitorPeriod.text $c.grace.text) }}
{{- end }}
{{- $rd := get $c "leaderElection.renewDeadline" }}
{{- $rp := get $c "leaderElection.retryPeriod" }}
{{- if not (lt $rd.ms $le.ms) }}
{{- $problems = append $problems (printf "controller.leaderElection.renewDeadline: %s must be shorter than controller.leaderElection.leaseDuration (%s)" $rd.text $le.text) }}
{{- end }}
{{- $retryJitter := $defaults.controller.leaderElection.retryJitterFraction }}
{{- if not (lt (mulf $rp.ms (addf 1.0 $retryJitter)) $rd.ms) }}
{{- $problems = append $problems (printf "controller.leaderElection.retryPeriod: %s must be shorter than controller.leaderElection.renewDeadline (%s) with %v%% jitter added" $rp.text $rd.text (mulf $retryJitter 100.0)) }}
{{- end }}
{{- $interval := include "nodepulse.durationMs" .Values.monitoring.podMonitor.interval | float64 }}
{{- $timeout := include "nodepulse.durationMs" .Values.monitoring.podMonitor.scrapeTimeout | float64 }}
{{- if gt $timeout $interval }}
{{- $problems = append $problems (printf "monitoring.podMonitor.scrapeTimeout: %s must be no longer than monitoring.podMonitor.interval (%s)" .Values.monitoring.podMonitor.scrapeTimeout .Values.monitoring.podMonitor.interval) }}
{{- end }}
{{- end }}
{{- if $problems }}
{{- fail (printf "\n%s" (join "\n" $problems)) }}
{{- end }}
{{- end }}
