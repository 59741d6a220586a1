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
set title 'feature inversion gain (1 - MSE / MSE of the mean)'
set ylabel 'gain (chance 0)'
plot for [fam in 'npq pbm row afe'] 'attack.csv' every ::1 using (strcol(2) eq fam ? e($3) : 1/0):10 with linespoints title fam, 0 with lines dt 2 lc rgb 'black' title 'chance'
set title 'membership inference advantage (TPR - FPR)'
set ylabel 'advantage (chance 0)'
plot for [fam in 'npq pbm row afe'] 'attack.csv' every ::1 using (strcol(2) eq fam ? e($3) : 1/0):11 with linespoints title fam, 0 with lines dt 2 lc rgb 'black' title 'chance'
unset multiplot
