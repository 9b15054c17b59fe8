# Draws a soak's memory, thread, goroutine and FD series (docs/BENCHMARKS.md,
# "Soak"). Input: the sampler's columns: t_s rss_kib threads fds heap_kib
# gomem_kib goroutines rt_threads. Usage:
#   gnuplot -e "in='soak.series'; out='docs/plots/soak'; ttl='...'" scripts/plot-soak.gp
if (!exists("ttl")) ttl = "soak"
stats in u 1 nooutput
tmax = STATS_max
do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo size 900,620 noenhanced font ",10" } else { set terminal svg size 900,620 noenhanced font ",10" }
  set output out.".".fmt
  set multiplot layout 2,1 title ttl
  set grid
  set key inside center right opaque box
  set lmargin 10
  set rmargin 3
  set xrange [0:tmax]
  set format x ""
  set xlabel ""
  set ylabel "MiB"
  set yrange [0:*]
  plot in u 1:($2/1024) w lp pt 7 ps 0.4 t "worker RSS", \
       in u 1:($6/1024) w lp pt 9 ps 0.4 t "Go runtime, held", \
       in u 1:($5/1024) w lp pt 5 ps 0.4 t "Go heap objects (live and not yet swept)"
  set format x "%g"
  set xlabel "time since bring-up (s)"
  set ylabel "count"
  set logscale y
  set yrange [5:2000]
  plot in u 1:4 w lp pt 1 ps 0.4 t "open FDs", \
       in u 1:7 w lp pt 2 ps 0.4 t "goroutines", \
       in u 1:3 w lp pt 3 ps 0.4 t "OS threads"
  unset logscale y
  unset multiplot
}
