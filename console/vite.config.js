// The console's build (docs/console.md): served by the API at /console, so every URL is under it.
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  base: "/console/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, manifest: true, sourcemap: false },
});
