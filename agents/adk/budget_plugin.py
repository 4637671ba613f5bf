"""BudgetPlugin: a turn that uses up a daily budget stops before its next model call.

turns/drive.py refuses a turn that would start over budget; this plugin covers the turn
that crosses the budget mid-way. Before every model call it checks the user's
budgets (see agents.usage): other runs' tokens from the database, this turn's own
from the model responses it has counted, since the stored ones may lag behind. When
a budget is used up, the model is not called and the turn ends with an error.

One instance per turn (agents/plugins.py builds it with for_run() for every Run),
so the count it keeps on itself belongs to that turn alone. Which budgets apply is
read once a turn: the drive hands over those it read as the turn started
(`budgets`), else they are read at the turn's first model call. A budget an admin
adds mid-turn holds from the user's next turn; what other runs used is read before
every call, and only when a budget applies (a user with none costs no query).

A budget in money counts this turn's tokens at its model's prices (read once a
turn, and only under a money budget); a budget for one model counts only calls
to that model.
"""

from typing import Any, Self

from asgiref.sync import sync_to_async
from google.adk.agents.context import Context
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin

from agents.model_table import Price, cost_micros, price_of
from agents.models import Budget, Run
from agents.usage import BudgetExceeded, acheck_budget


class BudgetPlugin(BasePlugin):
    """Stops a turn before a model call once the user's daily budget is used up."""

    def __init__(self, *, run_id: Any, user_id: int) -> None:
        super().__init__(name="toolcrib_budget")
        self.run_id = run_id
        self.user_id = user_id
        self.tokens = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        # Handed over by the drive; None: read at the first model call.
        self.budgets: list[Budget] | None = None
        # The turn's model's prices, by model name, read under a money budget.
        self.prices: dict[str, Price | None] = {}

    @classmethod
    def for_run(cls, *, run: Run) -> Self:
        """The plugin for one turn: its run's user's budgets, its own tokens apart."""
        return cls(run_id=run.pk, user_id=run.user_id)

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Answer with an error instead of calling the model when over budget."""
        model = llm_request.model or ""
        try:
            self.budgets = await acheck_budget(
                user_id=self.user_id,
                exclude_run_id=self.run_id,
                extra_tokens=self.tokens,
                extra_micros=await self._cost_so_far(model),
                model=model,
                budgets=self.budgets,
            )
        except BudgetExceeded as exc:
            return LlmResponse(error_code=exc.code, error_message=str(exc))
        return None

    async def after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """Count the tokens of each whole model response (partials are previews)."""
        usage = llm_response.usage_metadata
        if usage and not llm_response.partial:
            self.tokens += usage.total_token_count or 0
            self.prompt_tokens += usage.prompt_token_count or 0
            self.completion_tokens += usage.candidates_token_count or 0
        return None

    async def _cost_so_far(self, model: str) -> int:
        """This turn's tokens at `model`'s prices, when a budget counts money."""
        if not self.tokens or not any(
            budget.daily_cost is not None for budget in self.budgets or ()
        ):
            return 0
        if model not in self.prices:
            self.prices[model] = await sync_to_async(price_of)(model)
        return cost_micros(
            price=self.prices[model],
            prompt=self.prompt_tokens,
            completion=self.completion_tokens,
        )
