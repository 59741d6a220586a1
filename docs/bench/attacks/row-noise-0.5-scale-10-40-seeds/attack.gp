set terminal pngcairo size 1100,420 noenhanced
set output 'attack.png'
set datafile separator ','
set multiplot layout 1,2
set logscale x
set xrange [1:2e4]
set xlabel 'epsilon (row level, one client; NPQ drawn at 1e4)'
set key bottom right
set grid
e(x) = (x != x || x > 1e4) ? 1e4 : x
ci(x) = x == x ? x : 0
set title 'inversion gain (below -0.5 not drawn)'
set ylabel 'gain (chance 0)'
set yrange [-0.5:1]
plot for [fam in 'npq pbm row afe'] 'attack.csv' every ::1 using (strcol(2) eq fam ? e($3) : 1/0):10:(ci($14)) with yerrorlines title fam, 0 with lines dt 2 lc rgb 'black' title 'chance'
set title 'membership advantage TPR - FPR (95% CI)'
set autoscale y
set ylabel 'advantage (chance 0)'
plot for [fam in 'npq pbm row afe'] 'attack.csv' every ::1 using (strcol(2) eq fam ? e($3) : 1/0):11:(ci($15)) with yerrorlines title fam, 0 with lines dt 2 lc rgb 'black' title 'chance'
unset multiplot
