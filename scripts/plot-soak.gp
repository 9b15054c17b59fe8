# Draws the soak's memory and thread series (docs/BENCHMARKS.md, "Soak").
# Input: the sampler's columns: t_s rss_kib threads fds heap_kib gomem_kib
# goroutines rt_threads. Usage:
#   gnuplot -e "in='soak.series'; out='docs/plots/soak'" scripts/plot-soak.gp
set datafile commentschars "#"
set xlabel "time since bring-up (s)"
set ylabel "MiB"
set y2label "count"
set ytics nomirror
set y2tics
set key top left
set grid
set yrange [0:*]
set y2range [0:*]
plot_cmd = "plot in u 1:($2/1024) w lp pt 7 ps 0.5 t 'worker RSS (MiB)', in u 1:($5/1024) w lp pt 5 ps 0.5 t 'Go heap, live (MiB)', in u 1:($6/1024) w lp pt 9 ps 0.5 t 'Go runtime, held (MiB)', in u 1:3 axes x1y2 w lp pt 3 ps 0.5 t 'OS threads', in u 1:4 axes x1y2 w lp pt 1 ps 0.5 t 'open FDs', in u 1:7 axes x1y2 w lp pt 2 ps 0.5 t 'goroutines'"
set terminal pngcairo size 900,500 noenhanced
set output out.".png"
eval plot_cmd
set terminal svg size 900,500 noenhanced
set output out.".svg"
eval plot_cmd
