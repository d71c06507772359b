// Accept an invitation: the link's token and a new password (POST /console/api/invitations/accept).
import { useState } from "react";
import { useNavigate, useSearchParams } from "react-router";
import { useMutation } from "@tanstack/react-query";
import { api } from "../api/client";
import { ErrorBox } from "../ui";

export function AcceptInvitation() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const token = params.get("token") ?? "";
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const mismatch = again.length > 0 && again !== password;
  const accept = useMutation({
    mutationFn: () => api.post("/console/api/invitations/accept", { body: { token, password } }),
    onSuccess: () => void navigate("/sign-in?accepted=1"),
  });
  if (!token)
    return (
      <main id="main" className="narrow">
        <h1>Accept your invitation</h1>
        <p role="alert">This link has no invitation token. Open the link from your invitation again.</p>
      </main>
    );
  return (
    <main id="main" className="narrow">
      <h1>Accept your invitation</h1>
      <p>Choose a password of at least 12 characters (not your e-mail address).</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!mismatch) accept.mutate();
        }}
      >
        <label>
          New password
          <input
            type="password"
            autoComplete="new-password"
            minLength={12}
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <label>
          Repeat the password
          <input
            type="password"
            autoComplete="new-password"
            required
            value={again}
            aria-invalid={mismatch}
            onChange={(e) => setAgain(e.target.value)}
          />
        </label>
        {mismatch && <p role="alert">The passwords differ.</p>}
        <button type="submit" disabled={accept.isPending || mismatch}>
          Set password
        </button>
        {accept.isError && <ErrorBox error={accept.error} />}
      </form>
    </main>
  );
}
