// The 30-day chart of the overview (uPlot, its own chunk): median and p90 seconds per day.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { SpeedReport } from "../api/types";

export default function SpeedChart({ series }: { series: NonNullable<SpeedReport["series"]> }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const data: uPlot.AlignedData = [
      series.map((row) => Date.parse(`${row.day}T00:00:00Z`) / 1000),
      series.map((row) => row.medianSeconds),
      series.map((row) => row.p90Seconds),
    ];
    const width = Math.min(element.clientWidth || 600, 900);
    const plot = new uPlot(
      {
        width,
        height: 200,
        series: [
          {},
          { label: "median (s)", stroke: "#2563eb", spanGaps: true },
          { label: "p90 (s)", stroke: "#d97706", spanGaps: true },
        ],
        axes: [{}, { label: "seconds" }],
      },
      data,
      element,
    );
    return () => plot.destroy();
  }, [series]);
  const days = series.filter((row) => row.leads > 0).length;
  return (
    <figure>
      <div
        ref={box}
        className="chart"
        role="img"
        aria-label={`Median and p90 seconds to the first reply, per day (${days} days with leads)`}
      />
      <figcaption>Median and p90 time to the first reply, per day (UTC).</figcaption>
    </figure>
  );
}
